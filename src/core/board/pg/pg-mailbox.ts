import type pg from 'pg';
import { AutoteamError, InboxFullError } from '../../errors.js';
import { formatBytes, formatLimit } from '../../sizes.js';
import { Mailbox, type MailboxOptions } from '../mailbox.js';
import { describeZodError, type Message, MessageSchema } from '../schemas.js';
import { withConnectionRetry } from './connection.js';

/** Messages one drain takes at most; with the inbox limit this bounds a batch in bytes too. */
const DRAIN_BATCH_ROWS = 200;

/**
 * Inboxes in `autoteam_messages`: a send is an INSERT (its trigger notifies `inbox:<name>`), refused
 * once the recipient's messages take `maxInboxBytes` (stored size, `pg_column_size`); a drain is one
 * `DELETE … RETURNING` of the oldest DRAIN_BATCH_ROWS — every message taken once, by one drainer,
 * nothing lost between. A row that is not a message moves to recipient `<name>.rejected` (a name no
 * inbox can have). The rules (recipients, validation, redaction) are the file Mailbox's.
 */
export class PgMailbox extends Mailbox {
  constructor(
    rootDir: string,
    private readonly url: string,
    private readonly pool: pg.Pool,
    options: MailboxOptions,
  ) {
    super(rootDir, { ...options, files: false });
  }

  /** Inboxes are rows here: a file in the folder's inbox place is nobody's. */
  protected override checkInbox(): boolean {
    return false;
  }

  protected override async deliver(to: string, message: Message): Promise<void> {
    // Checked and inserted in one statement; two senders at once may each pass it by one message.
    const { rows } = await withConnectionRetry(this.url, () =>
      this.pool.query<{ seq: string }>(
        `INSERT INTO autoteam_messages (recipient, body)
         SELECT $1, $2::jsonb
         WHERE (SELECT coalesce(sum(pg_column_size(body)), 0) FROM autoteam_messages WHERE recipient = $1) + pg_column_size($2::jsonb) <= $3
         RETURNING seq`,
        [to, JSON.stringify(message), this.maxInboxBytes],
      ),
    );
    if (rows.length > 0) return;
    const { rows: held } = await withConnectionRetry(this.url, () =>
      this.pool.query<{ bytes: string; size: number }>(
        'SELECT coalesce(sum(pg_column_size(body)), 0) AS bytes, pg_column_size($2::jsonb) AS size FROM autoteam_messages WHERE recipient = $1',
        [to, JSON.stringify(message)],
      ),
    );
    const where = `${held[0]!.bytes === '0' ? 'empty' : `holds ${formatBytes(Number(held[0]!.bytes))}`} on the PostgreSQL board, this message is ${formatBytes(held[0]!.size)}`;
    throw new InboxFullError(to, where, formatLimit(this.maxInboxBytes));
  }

  override async drain(name: string): Promise<Message[]> {
    this.inboxPath(name);
    const { rows } = await withConnectionRetry(this.url, () =>
      this.pool.query<{ seq: string; body: unknown }>(
        `DELETE FROM autoteam_messages WHERE seq IN (
           SELECT seq FROM autoteam_messages WHERE recipient = $1 ORDER BY seq LIMIT $2 FOR UPDATE SKIP LOCKED)
         RETURNING seq, body`,
        [name, DRAIN_BATCH_ROWS],
      ),
    );
    const messages: Message[] = [];
    const rejected: unknown[] = [];
    for (const row of rows.sort((a, b) => Number(a.seq) - Number(b.seq))) {
      const parsed = MessageSchema.safeParse(row.body);
      if (parsed.success) {
        messages.push(parsed.data);
        continue;
      }
      this.reject(name, `message ${row.seq}`, describeZodError(parsed.error), `the PostgreSQL board: inbox ${name}, message ${row.seq}`);
      rejected.push(row.body);
    }
    for (const body of rejected) {
      await withConnectionRetry(this.url, () => this.pool.query('INSERT INTO autoteam_messages (recipient, body) VALUES ($1, $2)', [`${name}.rejected`, JSON.stringify(body)]));
    }
    return messages;
  }

  override async restore(name: string, messages: readonly Message[]): Promise<void> {
    // They were in the inbox already: putting them back is never refused for its size.
    for (const message of messages) {
      await withConnectionRetry(this.url, () => this.pool.query('INSERT INTO autoteam_messages (recipient, body) VALUES ($1, $2)', [name, JSON.stringify(message)]));
    }
  }

  override async rejectedCount(name: string): Promise<number> {
    const { rows } = await withConnectionRetry(this.url, () =>
      this.pool.query<{ n: string }>('SELECT count(*) AS n FROM autoteam_messages WHERE recipient = $1', [`${this.inboxName(name)}.rejected`]),
    );
    return Number(rows[0]!.n);
  }

  protected override rejectedLocation(name: string): string {
    return `recipient '${name}.rejected' in autoteam_messages`;
  }

  override peek(_name: string): Message[] {
    throw new AutoteamError('peek reads an inbox file; on the PostgreSQL board read messages with drain', 'USAGE');
  }

  /** The name, checked as every backend checks it. */
  private inboxName(name: string): string {
    this.inboxPath(name);
    return name;
  }
}

import type pg from 'pg';
import { AutoteamError } from '../../errors.js';
import { Mailbox, type MailboxOptions } from '../mailbox.js';
import { type Message, MessageSchema } from '../schemas.js';
import { withConnectionRetry } from './connection.js';

/**
 * Inboxes in `autoteam_messages`: a send is an INSERT (its trigger notifies `inbox:<name>`), a drain
 * one `DELETE … RETURNING` — every message taken once, by one drainer, nothing lost between. The
 * rules (recipients, validation, redaction) are the file Mailbox's.
 */
export class PgMailbox extends Mailbox {
  constructor(
    rootDir: string,
    private readonly url: string,
    private readonly pool: pg.Pool,
    options: MailboxOptions,
  ) {
    super(rootDir, options);
  }

  protected override async deliver(to: string, message: Message): Promise<void> {
    await withConnectionRetry(this.url, () => this.pool.query('INSERT INTO autoteam_messages (recipient, body) VALUES ($1, $2)', [to, JSON.stringify(message)]));
  }

  override async drain(name: string): Promise<Message[]> {
    this.inboxPath(name);
    const { rows } = await withConnectionRetry(this.url, () =>
      this.pool.query<{ seq: string; body: unknown }>('DELETE FROM autoteam_messages WHERE recipient = $1 RETURNING seq, body', [name]),
    );
    return rows
      .sort((a, b) => Number(a.seq) - Number(b.seq))
      .flatMap((row) => {
        const parsed = MessageSchema.safeParse(row.body);
        return parsed.success ? [parsed.data] : [];
      });
  }

  override async restore(name: string, messages: readonly Message[]): Promise<void> {
    for (const message of messages) await this.deliver(name, message);
  }

  override peek(_name: string): Message[] {
    throw new AutoteamError('peek reads an inbox file; on the PostgreSQL board read messages with drain', 'USAGE');
  }
}

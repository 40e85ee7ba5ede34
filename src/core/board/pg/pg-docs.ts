import type pg from 'pg';
import type { z } from 'zod';
import { BoardFileError } from '../../errors.js';
import { redact, secretValues } from '../../trace/redact.js';
import type { ReplicaRead } from '../board-types.js';
import type { ChangeOptions, DocStore } from '../docs.js';
import { describeZodError } from '../schemas.js';
import { describeUrl, transaction, withConnectionRetry } from './connection.js';
import { Sightings } from './sightings.js';

/** Every document's key and version, and its body where the version differs from the one held ($1 keys, $2 versions). */
const CHANGED_DOCS = `SELECT d.key, d.version, CASE WHEN k.version IS DISTINCT FROM d.version THEN d.doc END AS doc
  FROM autoteam_docs d LEFT JOIN unnest($1::text[], $2::bigint[]) AS k (key, version) ON k.key = d.key`;

type DocsRead = NonNullable<ReplicaRead['docs']>;

/**
 * A document written over the version read ($3) only, in one statement, under the key's advisory
 * lock as `change`'s transaction takes it: that transaction reads without a row lock and writes
 * over whatever is there, so a write landing between its read and its write would be lost. A quiet
 * change (a heartbeat) turns the notify trigger off for its statement alone ($4). Returns the new
 * version, or no row when the document moved.
 */
const UPDATE_IF_UNCHANGED = `WITH guard AS (SELECT pg_advisory_xact_lock(hashtext('autoteam_doc:' || $1)), set_config('autoteam.quiet', $4, true))
  UPDATE autoteam_docs SET doc = $2 FROM guard WHERE key = $1 AND version = $3 RETURNING version`;

/**
 * The board's small documents in `autoteam_docs`. Reads answer at once from a replica of the table
 * (a few documents), which every write of this process updates and every notification refreshes;
 * a change runs under a transaction-scoped advisory lock on the key, so it is atomic even for a
 * document that does not exist yet.
 */
export class PgDocStore implements DocStore {
  private readonly replica = new Map<string, { doc: unknown; version: number }>();
  /** When the replica last took each document (a read begun before must not undo it). */
  private readonly seen = new Sightings<string>();
  /** Told every read, for the replicas that follow this one. */
  private readonly readers = new Set<(read: DocsRead) => void>();
  private readonly secrets = secretValues();

  constructor(
    private readonly url: string,
    private readonly pool: pg.Pool,
  ) {}

  describe(key: string): string {
    return `${describeUrl(this.url)}#${key}`;
  }

  /**
   * Re-reads `keys`, or every document: then each one's version, and the document only where the
   * version moved (the poll's read, every few seconds, sends back only what changed).
   */
  async refresh(keys?: readonly string[]): Promise<number> {
    const started = this.seen.mark();
    const { rows } = await withConnectionRetry(this.url, () =>
      keys
        ? this.pool.query<{ key: string; doc: unknown; version: string }>('SELECT key, doc, version FROM autoteam_docs WHERE key = ANY ($1)', [keys])
        : this.pool.query<{ key: string; doc: unknown; version: string }>(CHANGED_DOCS, [[...this.replica.keys()], [...this.replica.values()].map((entry) => entry.version)]),
    );
    // A reply that left before the replica took a key (this process's own write above all) must not
    // put back what it replaced (a notification's refresh racing a join read the config without the new member).
    const newer = (key: string) => this.seen.since(key, started);
    const present = new Set(rows.map((row) => row.key));
    // What the read brought, for the replicas that follow this one (none in most processes).
    const read: DocsRead | null = this.readers.size ? { rows: [], gone: [] } : null;
    let changed = 0;
    for (const key of keys ?? [...this.replica.keys()]) {
      const held = this.replica.get(key);
      if (present.has(key) || newer(key) || !held) continue;
      this.replica.delete(key);
      read?.gone.push({ key, upTo: held.version });
      changed++;
    }
    for (const row of rows) {
      // An unchanged document comes back without its body (CHANGED_DOCS); the column is never null.
      if (row.doc === null) continue;
      read?.rows.push({ key: row.key, doc: row.doc, version: Number(row.version) });
      if (newer(row.key) || (this.replica.get(row.key)?.version ?? 0) >= Number(row.version)) continue;
      this.replica.set(row.key, { doc: row.doc, version: Number(row.version) });
      this.seen.saw(row.key);
      changed++;
    }
    if (read && (read.rows.length || read.gone.length)) for (const reader of this.readers) reader(read);
    return changed;
  }

  /** Every read from now on; returns the unsubscribe. */
  onRead(listener: (read: DocsRead) => void): () => void {
    this.readers.add(listener);
    return () => this.readers.delete(listener);
  }

  /**
   * Takes a document a notification carried (`docrow:`, schema version 6), as a read's, with no read
   * of it; versions decide. The replicas that follow this one are told it even when this one held it:
   * this process's own write, which its threads have not seen.
   */
  heard(row: { key: string; version: number; doc: unknown }): void {
    if ((this.replica.get(row.key)?.version ?? 0) < row.version) {
      this.replica.set(row.key, { doc: row.doc, version: row.version });
      this.seen.saw(row.key);
    }
    for (const reader of this.readers) reader({ rows: [row], gone: [] });
  }

  /** A follower's: takes a read another replica made. Versions decide, for a deletion too. */
  follow(read: DocsRead): number {
    let changed = 0;
    for (const { key, upTo } of read.gone) {
      const held = this.replica.get(key);
      if (held && held.version <= upTo && this.replica.delete(key)) changed++;
    }
    for (const row of read.rows) {
      if ((this.replica.get(row.key)?.version ?? 0) >= row.version) continue;
      this.replica.set(row.key, { doc: row.doc, version: row.version });
      this.seen.saw(row.key);
      changed++;
    }
    return changed;
  }

  read<S extends z.ZodTypeAny>(key: string, schema: S): z.output<S> | undefined {
    const entry = this.replica.get(key);
    if (!entry) return undefined;
    const parsed = schema.safeParse(entry.doc);
    if (!parsed.success) throw new BoardFileError(this.describe(key), describeZodError(parsed.error));
    return parsed.data as z.output<S>;
  }

  keys(prefix: string): string[] {
    return [...this.replica.keys()].filter((key) => key.startsWith(prefix)).sort();
  }

  /**
   * One statement when the replica's copy decides it (the document still holds that version: a
   * member's status, a heartbeat), else the document read and written under its advisory lock in one
   * transaction. `fn` may run on the copy first and then again on the document as it is.
   */
  async change<T>(key: string, fn: (current: unknown) => { write?: unknown; result: T }, options: ChangeOptions = {}): Promise<T> {
    const text = (value: unknown) => redact(JSON.stringify(value), this.secrets);
    let fast = await this.changeIfUnchanged(key, fn, text, options);
    // The copy moved (a dozen members' statuses share one document): read it again and try once more
    // in one statement, rather than hold the document's lock over a locked transaction's five.
    if (fast === 'moved') fast = await this.refresh([key]).then(() => this.changeIfUnchanged(key, fn, text, options));
    if (fast && fast !== 'moved') return fast.result;
    const { write, result, version } = await transaction(this.url, this.pool, async (client) => {
      // A quiet change turns the notify trigger off for this transaction only (schema.ts).
      await client.query("SELECT pg_advisory_xact_lock(hashtext('autoteam_doc:' || $1)), set_config('autoteam.quiet', $2, true)", [key, options.quiet ? 'on' : 'off']);
      const { rows } = await client.query<{ doc: unknown }>('SELECT doc FROM autoteam_docs WHERE key = $1', [key]);
      const changed = fn(rows[0]?.doc);
      if (changed.write === null) {
        // The version deleted: a follower holding it or an older one drops it (the notification's read finds nothing to tell).
        const deleted = await client.query<{ version: string }>('DELETE FROM autoteam_docs WHERE key = $1 RETURNING version', [key]);
        return { ...changed, version: Number(deleted.rows[0]?.version ?? 0) };
      }
      if (changed.write === undefined) return { ...changed, version: 0 };
      const saved = await client.query<{ version: string }>(
        'INSERT INTO autoteam_docs (key, doc) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET doc = EXCLUDED.doc RETURNING version',
        [key, text(changed.write)],
      );
      return { ...changed, version: Number(saved.rows[0]!.version) };
    });
    if (write !== undefined) this.seen.saw(key);
    if (write === null) {
      this.replica.delete(key);
      if (version) for (const reader of this.readers) reader({ rows: [], gone: [{ key, upTo: version }] });
    } else if (write !== undefined) this.replica.set(key, { doc: JSON.parse(text(write)), version });
    return result;
  }

  /**
   * `fn` on the replica's copy, written in one statement only while the document holds the copy's
   * version (UPDATE_IF_UNCHANGED); `moved` when the copy's version was not the document's; null when
   * that did not decide it otherwise: no copy, no write or a deletion, or `fn` refusing the copy (each
   * asked again on the document as it is).
   */
  private async changeIfUnchanged<T>(
    key: string,
    fn: (current: unknown) => { write?: unknown; result: T },
    text: (value: unknown) => string,
    options: ChangeOptions,
  ): Promise<{ result: T } | 'moved' | null> {
    const held = this.replica.get(key);
    if (!held) return null;
    let changed: { write?: unknown; result: T };
    try {
      changed = fn(structuredClone(held.doc));
    } catch {
      return null;
    }
    // Nothing to write, or a deletion: decided on the document as it is.
    if (changed.write === undefined || changed.write === null) return null;
    const body = text(changed.write);
    const { rows } = await withConnectionRetry(this.url, () =>
      this.pool.query<{ version: string }>(UPDATE_IF_UNCHANGED, [key, body, held.version, options.quiet ? 'on' : 'off']),
    );
    if (!rows[0]) return 'moved';
    this.seen.saw(key);
    this.replica.set(key, { doc: JSON.parse(body), version: Number(rows[0].version) });
    return { result: changed.result };
  }
}

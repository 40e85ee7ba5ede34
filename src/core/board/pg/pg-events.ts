import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import { type EventLog, pause } from '../../events/log.js';
import { type EventFilter, matches, type TeamEvent, TeamEventSchema } from '../../events/schema.js';
import { redact, secretValues } from '../../trace/redact.js';
import { withConnectionRetry } from './connection.js';

/**
 * Appends a batch in one statement. The transaction-scoped advisory lock serialises appends, so
 * events commit in `seq` order and a reader that asks for `seq > last` never skips one that commits
 * late (a bigserial alone would allow that).
 */
const APPEND = `
WITH guard AS (SELECT pg_advisory_xact_lock(hashtext('autoteam_events')))
INSERT INTO autoteam_events (ts, type, pipeline, task, body)
SELECT (e->>'ts')::timestamptz, e->>'type', (e->>'pipeline')::integer, (e->>'task')::integer, e
FROM guard, jsonb_array_elements($1::jsonb) WITH ORDINALITY AS t(e, i)
ORDER BY i
RETURNING seq`;

/**
 * APPEND, unless one of the tasks `$2` claims was posted in the last `$3` seconds and its post is not
 * in the log yet: then nothing, for the batch to be tried again (PgEventLog.append). The statement's
 * snapshot predates the lock, so a post committed while it waited counts as missing, and the next
 * try finds it.
 */
const APPEND_AFTER_POSTS = APPEND.replace(
  'INSERT INTO',
  `, unlogged AS (
  SELECT t.id FROM guard, autoteam_tasks t
  WHERE t.id = ANY ($2::integer[]) AND t.created_at > now() - make_interval(secs => $3)
    AND NOT EXISTS (SELECT 1 FROM autoteam_events p WHERE p.task = t.id AND p.type = 'task_posted'))
INSERT INTO`,
).replace('ORDER BY i', 'WHERE NOT EXISTS (SELECT 1 FROM unlogged)\nORDER BY i');

/**
 * How long a batch that claims a task waits for the task's post to be in the log (PgEventLog.append).
 * A post's event is written by its poster right after the commit that woke the claimer, so the wait
 * is a few milliseconds; a poster killed in between never writes it, and the claim goes in after this.
 */
export const POST_WAIT_MS = 2_000;

const READ = `
SELECT seq, body FROM autoteam_events
WHERE seq > $1 AND ($2::integer IS NULL OR pipeline = $2) AND ($3::timestamptz IS NULL OR ts >= $3)
ORDER BY seq DESC LIMIT $4`;

/** The most a follower reads in one query; a longer backlog is read in pages. */
const PAGE = 1_000;

/** Appends `events` on `client`, in a transaction of the caller's (an import's), numbered by this log (their own seq dropped). */
export async function appendEvents(client: pg.PoolClient, events: readonly TeamEvent[]): Promise<void> {
  await client.query(APPEND, [JSON.stringify(events.map(({ seq: _seq, ...event }) => event))]);
}

/**
 * Where a batch may have to wait (PgEventLog.append): its first claim of a task not posted earlier in
 * the batch; its length when there is none.
 */
function heldFrom(bodies: readonly TeamEvent[]): number {
  const posted = new Set<number>();
  for (const [index, event] of bodies.entries()) {
    if (event.task == null) continue;
    if (event.type === 'task_posted') posted.add(event.task);
    else if (event.type === 'task_claimed' && !posted.has(event.task)) return index;
  }
  return bodies.length;
}

/**
 * The event log in `autoteam_events`. A statement-level trigger NOTIFYs `event` after each append;
 * followers wake on it (through the board's one LISTEN connection) and poll as the fallback.
 */
export class PgEventLog implements EventLog {
  private readonly secrets = secretValues();

  constructor(
    private readonly url: string,
    private readonly pool: pg.Pool,
    private readonly appended: { on(listener: () => void): () => void },
    private readonly pollMs = 500,
    private readonly postWaitMs = POST_WAIT_MS,
  ) {}

  /** Batches held back because a task they claim was not yet logged as posted (tests). */
  held = 0;

  /**
   * Appends the batch. A claim is logged after its task's post: the file board writes a post's event
   * before the task can be claimed (TaskRules.announce), but here the poster writes it after the
   * commit that wakes every claimer, whose own batch could land first. So the batch goes in up to its
   * first claim of a task posted elsewhere (heldFrom); from there it waits, tried again while a task
   * it claims was posted within `postWaitMs` and its post is not in the log yet, for at most
   * `postWaitMs`. Its later events wait with it, which keeps this process's order. A part that
   * carries a post of its own is never held: two processes each holding a post the other's claim
   * waits for would stall each other for the whole wait.
   */
  async append(events: readonly TeamEvent[]): Promise<TeamEvent[]> {
    if (events.length === 0) return [];
    const bodies = events.map(({ seq: _seq, ...event }) => JSON.parse(redact(JSON.stringify(event), this.secrets)) as TeamEvent);
    const from = heldFrom(bodies);
    const rest = bodies.slice(from);
    const claimed = rest.some((event) => event.type === 'task_posted') ? [] : [...new Set(rest.flatMap((event) => (event.type === 'task_claimed' && event.task != null ? [event.task] : [])))];
    const seqs = claimed.length && from > 0 ? await this.insert(bodies.slice(0, from)) : [];
    seqs.push(...(await this.insert(claimed.length ? rest : bodies, claimed)));
    return bodies.map((event, i) => ({ seq: seqs[i]!, ...event }) as TeamEvent);
  }

  /** `bodies` appended, their seqs in order; after the posts of `claimed` as append says, when any. */
  private async insert(bodies: readonly TeamEvent[], claimed: readonly number[] = []): Promise<number[]> {
    const json = JSON.stringify(bodies);
    const until = Date.now() + this.postWaitMs;
    for (let wait = 5; ; wait = Math.min(wait * 2, 100)) {
      const after = claimed.length > 0 && Date.now() < until;
      const { rows } = await withConnectionRetry(this.url, () =>
        this.pool.query<{ seq: string }>(after ? APPEND_AFTER_POSTS : APPEND, after ? [json, claimed, this.postWaitMs / 1000] : [json]),
      );
      if (rows.length > 0 || !after) return rows.map((row) => Number(row.seq)).sort((a, b) => a - b);
      this.held++;
      await sleep(Math.min(wait, Math.max(0, until - Date.now())));
    }
  }

  async read(filter: EventFilter = {}, limit = Number.POSITIVE_INFINITY): Promise<TeamEvent[]> {
    const found: TeamEvent[] = [];
    let since = typeof filter.since === 'number' ? filter.since : 0;
    // Pages oldest first until the backlog is read (or, with a limit, only the newest page).
    for (;;) {
      const page = await this.page(since, filter, Number.isFinite(limit) ? limit : PAGE, Number.isFinite(limit));
      found.push(...page.filter((event) => matches(event, filter)));
      if (Number.isFinite(limit) || page.length < PAGE) break;
      since = page.at(-1)!.seq!;
    }
    return found.length > limit ? found.slice(found.length - limit) : found;
  }

  async subscribe(filter: EventFilter, onEvent: (event: TeamEvent) => void, signal: AbortSignal): Promise<void> {
    // After this seq from the second read on. From a time (or from the start), the first read takes
    // what matches and where the log ended before it: the next reads go on from there, never from seq 0
    // (a time with no event after it read the whole log again).
    let last = typeof filter.since === 'number' ? filter.since : null;
    while (!signal.aborted) {
      let events: TeamEvent[] | null = null;
      if (last === null) {
        const tail = await this.tail().catch(() => null);
        if (tail !== null) events = await this.read(filter).catch(() => null);
        if (events) last = tail!;
      } else {
        events = await this.read({ ...filter, since: last }).catch(() => null);
      }
      for (const event of events ?? []) {
        last = Math.max(last ?? 0, event.seq ?? 0);
        onEvent(event);
      }
      if (events && events.length >= PAGE) continue;
      await pause(this.pollMs, signal, this.appended);
    }
  }

  /** The seq of the newest event (0 for none). */
  private async tail(): Promise<number> {
    const { rows } = await withConnectionRetry(this.url, () => this.pool.query<{ seq: string | null }>('SELECT max(seq) AS seq FROM autoteam_events'));
    return Number(rows[0]?.seq ?? 0);
  }

  /** Events after `since`, oldest first: the next page, or (newest) the last `size` of them. */
  private async page(since: number, filter: EventFilter, size: number, newest: boolean): Promise<TeamEvent[]> {
    const time = filter.since instanceof Date ? filter.since.toISOString() : null;
    const sql = newest ? READ : READ.replace('ORDER BY seq DESC', 'ORDER BY seq ASC');
    const { rows } = await withConnectionRetry(this.url, () =>
      this.pool.query<{ seq: string; body: unknown }>(sql, [since, filter.pipeline ?? null, time, size]),
    );
    const events: TeamEvent[] = [];
    for (const row of rows) {
      const parsed = TeamEventSchema.safeParse({ ...(row.body as object), seq: Number(row.seq) });
      if (parsed.success) events.push(parsed.data);
    }
    return newest ? events.reverse() : events;
  }
}

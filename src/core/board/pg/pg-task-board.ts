import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import type pg from 'pg';
import { NotFoundError } from '../../errors.js';
import { redact, secretValues } from '../../trace/redact.js';
import { ArtifactsSchema } from '../artifacts.js';
import { whyNotClaimable } from '../task-checks.js';
import { type Task, TaskSchema } from '../schemas.js';
import type { BoardProblem } from '../task-index.js';
import { createAfterUnderLock, DEFAULT_LEASE_MS, Refusal, type TaskBoardLike, TaskRules } from '../task-rules.js';
import type { ClaimResult, CreateTaskInput, MutationResult } from '../task-types.js';
import { createPool, describeUrl, isConnectionError, transaction, withConnectionRetry } from './connection.js';
import { DbClock } from './db-clock.js';
import { migrateWith } from './schema.js';
import { Sightings } from './sightings.js';
import { ALL_VERSIONS, CHANGED_SINCE, CLAIM_EXPIRED, CLAIM_ONE, CLAIM_PENDING, insertTask, postAfter, SELECTED, SET_ALL, type TaskRow, type TasksRead, toRow, toTask, UPDATE_IF_UNCHANGED } from './task-sql.js';

export interface PgTaskBoardOptions {
  leaseMs?: number;
  /** Connections in this process's pool (claimers in one process share it). */
  poolSize?: number;
  /** The local folder for what stays on each host: workspaces, the trace, submission blobs. */
  rootDir?: string;
}

/** Tasks a process posts between two ANALYZEs of the tasks table. */
const ANALYZE_EVERY = 200;
/** How often refresh() compares every row's version rather than reading what changed. */
const FULL_COMPARE_MS = 30_000;

/**
 * The task store on PostgreSQL. Claims are one statement (`FOR UPDATE SKIP LOCKED`, the pg-boss and
 * graphile-worker pattern), leases are measured by the database's clock, and every other write runs
 * the same rules as the file board (`TaskRules`), so a fenced write changes nothing. Reads answer at
 * once from a replica of the table: loaded at open, updated by this process's own writes, and
 * refreshed (only the rows whose `version` moved) on every notification and `refresh()`. A read may
 * lag another host's write by the notification's latency; every decision that matters is taken in the
 * database (claims, fences, a stage's next task posted once under its pipeline's lock).
 *
 * A write is one statement when it can be: a change made to the replica's copy of a task is written
 * only while the row still holds that version and the time it is stamped with (the database's clock
 * as this process reckons it, DbClock) is within a second of the database's; anything else (the row
 * moved, the rules refuse on the copy, the reckoning is off) is decided again on the row, locked,
 * by the database's own clock. A task's stamps never go back: each write's is at least the last's.
 */
export class PgTaskBoard extends TaskRules implements TaskBoardLike {
  protected readonly leaseMs: number;
  readonly rootDir: string;
  protected readonly redact: (text: string) => string;
  /** The database's clock during a mutation; the rules read it through now(). */
  private dbNow: Date | null = null;
  private readonly replica = new Map<number, { task: Task; version: number }>();
  private sorted: Task[] | null = null;
  /** The horizon of the last read (see CHANGED_SINCE), and when every version was last compared. */
  private horizon: string | null = null;
  private comparedAt = 0;
  /** When the replica last took each task (a full comparison does not drop one it took meanwhile). */
  private readonly seen = new Sightings<number>();
  /** Told every read (rows and what was found gone), for the replicas that follow this one. */
  private readonly readers = new Set<(read: TasksRead) => void>();
  /** Tasks this process posted since it last had the tasks table analyzed (see create). */
  private postedSinceAnalyze = 0;
  private readonly clock = new DbClock();
  private ownsPool = false;

  constructor(
    readonly url: string,
    readonly pool: pg.Pool,
    options: PgTaskBoardOptions = {},
  ) {
    super();
    this.leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.rootDir = path.resolve(options.rootDir ?? process.cwd());
    const secrets = secretValues();
    this.redact = (text) => redact(text, secrets);
  }

  /** Connects, creates or migrates the schema, and loads the replica (a pool of its own; close() ends it). */
  static async open(url: string, options: PgTaskBoardOptions = {}): Promise<PgTaskBoard> {
    const pool = createPool(url, options.poolSize);
    try {
      await migrateWith(url, pool);
      const board = new PgTaskBoard(url, pool, options);
      await board.refresh();
      board.ownsPool = true;
      return board;
    } catch (error) {
      await pool.end().catch(() => undefined);
      throw error;
    }
  }

  get location(): string {
    return describeUrl(this.url);
  }

  async close(): Promise<void> {
    if (this.ownsPool) await this.pool.end();
  }

  protected now(): Date {
    return this.dbNow ?? new Date();
  }

  private query<R extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<pg.QueryResult<R>> {
    return withConnectionRetry(this.url, () => this.pool.query<R>(text, values));
  }

  /**
   * Catches up with the database: the rows changed since the last read (see CHANGED_SINCE), or `ids`.
   * Every FULL_COMPARE_MS it compares every row's version instead, which also drops rows deleted by
   * hand. Returns how many rows changed in the replica.
   */
  async refresh(ids?: readonly number[]): Promise<number> {
    if (ids) {
      if (ids.length === 0) return 0;
      const { rows } = await this.query<TaskRow>(`SELECT ${SELECTED} FROM autoteam_tasks WHERE id = ANY ($1)`, [[...ids]]);
      return this.read(rows, []);
    }
    if (this.horizon === null || Date.now() - this.comparedAt >= FULL_COMPARE_MS) return this.compareAll();
    const sentMs = Date.now();
    const { rows } = await this.query<TaskRow & { horizon: string; db_now: Date }>(CHANGED_SINCE, [this.horizon]);
    this.horizon = rows[0]!.horizon;
    this.clock.read(rows[0]!.db_now, sentMs);
    return this.read(rows.filter((row) => row.id !== null), []);
  }

  /** Takes rows a notification carried, as a read's (the followers are told); returns how many changed here. */
  heard(rows: readonly TaskRow[]): number {
    return this.read(rows, []);
  }

  /** Every read from now on, as its rows and the ids it found gone; returns the unsubscribe. */
  onRead(listener: (read: TasksRead) => void): () => void {
    this.readers.add(listener);
    return () => this.readers.delete(listener);
  }

  /** A follower's: takes a read another replica made (versions decide; a task found gone is dropped). */
  follow(read: TasksRead): number {
    let changed = 0;
    for (const id of read.gone) {
      if (this.replica.delete(id)) changed++;
    }
    if (changed) this.sorted = null;
    for (const row of read.rows) if (this.take(row)) changed++;
    return changed;
  }

  /** Takes what a read brought and tells the followers; returns how many rows changed here. */
  private read(rows: readonly TaskRow[], gone: readonly number[]): number {
    let changed = gone.length;
    for (const row of rows) if (this.take(row)) changed++;
    if (this.readers.size && (rows.length || gone.length)) for (const reader of this.readers) reader({ rows, gone });
    return changed;
  }

  private async compareAll(): Promise<number> {
    const started = this.seen.mark();
    const sentMs = Date.now();
    const { rows } = await this.query<{ horizon: string; db_now: Date; id: number | null; version: string | null }>(ALL_VERSIONS);
    this.clock.read(rows[0]!.db_now, sentMs);
    const present = new Set(rows.flatMap((row) => (row.id === null ? [] : [row.id])));
    const gone: number[] = [];
    for (const id of this.replica.keys()) {
      // A task the replica took after the read began (one this process just posted) is not gone.
      if (present.has(id) || this.seen.since(id, started)) continue;
      this.replica.delete(id);
      this.sorted = null;
      gone.push(id);
    }
    const stale = rows.filter((row) => row.id !== null && this.replica.get(row.id)?.version !== Number(row.version)).map((row) => row.id!);
    const fetched = stale.length ? (await this.query<TaskRow>(`SELECT ${SELECTED} FROM autoteam_tasks WHERE id = ANY ($1)`, [stale])).rows : [];
    this.horizon = rows[0]!.horizon;
    this.comparedAt = Date.now();
    return this.read(fetched, gone);
  }

  /** Puts `row` in the replica unless it holds that version or a newer one; true when it changed. */
  private take(row: TaskRow): boolean {
    const version = Number(row.version ?? 0);
    const current = this.replica.get(row.id);
    // A slower reply must not put an older version back over a newer one.
    if (current && current.version >= version) return false;
    this.replica.set(row.id, { task: toTask(row), version });
    this.seen.saw(row.id);
    this.sorted = null;
    return true;
  }

  /** The task in `row`, which this process's own statement returned: taken into the replica when it is newer. */
  private apply(row: TaskRow): Task {
    // Seen even when the replica held that version: the row exists after any read begun before.
    this.seen.saw(row.id);
    this.take(row);
    const current = this.replica.get(row.id)!;
    return current.version === Number(row.version ?? 0) ? current.task : toTask(row);
  }

  list(): Task[] {
    this.sorted ??= [...this.replica.values()].map((entry) => entry.task).sort((a, b) => a.id - b.id);
    return this.sorted;
  }

  problems(): BoardProblem[] {
    return [];
  }

  get(id: number): Task {
    const entry = this.replica.get(id);
    if (!entry) throw new NotFoundError(`task #${id} does not exist (${this.location})`);
    return entry.task;
  }

  scanUnclaimed(role?: string): Task[] {
    const tasks = this.list();
    const byId = new Map(tasks.map((task) => [task.id, task]));
    const nowMs = Date.now();
    return tasks.filter((task) => whyNotClaimable(task, role, nowMs, (id) => byId.get(id)) === null);
  }

  async create(input: CreateTaskInput): Promise<Task> {
    const blockedBy = [...new Set(input.blockedBy ?? [])];
    const artifacts = ArtifactsSchema.parse(input.artifacts ?? {});
    const task = await this.transaction(async (client) => {
      if (blockedBy.length) {
        const { rows } = await client.query<{ id: number }>('SELECT id FROM autoteam_tasks WHERE id = ANY ($1) FOR UPDATE', [blockedBy]);
        const missing = blockedBy.find((id) => !rows.some((row) => row.id === id));
        if (missing !== undefined) throw new NotFoundError(`blockedBy: task #${missing} does not exist`);
      }
      const { rows: clock } = await client.query<{ now: Date }>('SELECT now()');
      const draft = this.draft(input, artifacts, blockedBy, clock[0]!.now.toISOString());
      const rows = await insertTask(client, this.clean(this.sizedNew(draft, input)));
      const blockers = blockedBy.length
        ? (await client.query<TaskRow>(`UPDATE autoteam_tasks SET blocks = array_append(blocks, $1) WHERE id = ANY ($2) AND NOT ($1 = ANY (blocks)) RETURNING ${SELECTED}`, [rows[0]!.id, blockedBy])).rows
        : [];
      return { row: rows[0]!, blockers };
    });
    for (const row of task.blockers) this.apply(row);
    await this.counted();
    const posted = this.apply(task.row);
    this.posted(posted, input.by ?? 'lead');
    return posted;
  }

  /**
   * One round trip (autoteam_post_after), stamped by the database's clock. A reply lost with the
   * connection is asked again under the same call id: the task it posted is then found as its own.
   */
  async createAfter(input: CreateTaskInput, after: { pipeline: number; task: number }): Promise<{ task: Task; created: boolean }> {
    // Blockers are checked and told in create's transaction (a stage's next task has none).
    if (input.blockedBy?.length) return createAfterUnderLock(this, input, after);
    const draft = this.clean(this.sizedNew(this.draft(input, ArtifactsSchema.parse(input.artifacts ?? {}), [], this.clock.now().toISOString()), input));
    const posted = await postAfter((text, values) => this.query(text, values), after, draft, randomUUID());
    // A database whose transactions are not READ COMMITTED: the check would not see a post made while it waited.
    if (!posted) return createAfterUnderLock(this, input, after);
    const task = this.apply(posted.row);
    if (posted.created) await this.counted().then(() => this.posted(task, input.by ?? 'lead'));
    return { task, created: posted.created };
  }

  /**
   * A post counted towards the next ANALYZE: with the table's first statistics the claim sorts every
   * pending row (~6× slower at 600) instead of reading the pending index in id order.
   */
  private async counted(): Promise<void> {
    if (++this.postedSinceAnalyze < ANALYZE_EVERY) return;
    this.postedSinceAnalyze = 0;
    await this.query('ANALYZE autoteam_tasks').catch(() => undefined);
  }

  async claimNext(owner: string, role?: string): Promise<ClaimResult | null> {
    // Named statements: parsed and planned once per connection, not on every claim.
    for (const [name, text] of [['autoteam_claim_pending', CLAIM_PENDING], ['autoteam_claim_expired', CLAIM_EXPIRED]] as const) {
      const { rows } = await withConnectionRetry(this.url, () => this.pool.query<TaskRow & { taken_over: boolean }>({ name, text, values: [role ?? null, owner, this.leaseMs] }));
      if (rows[0]) return this.took(rows[0], role);
    }
    return null;
  }

  async claim(id: number, owner: string, options: { role?: string; tryOnce?: boolean } = {}): Promise<ClaimResult> {
    const { rows } = await this.query<TaskRow & { taken_over: boolean }>(CLAIM_ONE, [options.role ?? null, owner, this.leaseMs, id]);
    if (rows[0]) return this.took(rows[0], options.role);
    // Not taken: say why, by the same rule the statement applied, on the row as it is now (one query).
    const task = await this.query<TaskRow & { db_now: Date }>(`SELECT ${SELECTED}, now() AS db_now FROM autoteam_tasks WHERE id = $1`, [id]);
    const row = task.rows[0];
    if (!row) return { ok: false, reason: `task #${id} does not exist` };
    const current = this.apply(row);
    const blockers = current.blockedBy.length ? await this.query<TaskRow>(`SELECT ${SELECTED} FROM autoteam_tasks WHERE id = ANY ($1)`, [current.blockedBy]) : { rows: [] };
    const byId = new Map(blockers.rows.map((blocker) => [blocker.id, this.apply(blocker)]));
    return { ok: false, reason: whyNotClaimable(current, options.role, row.db_now.getTime(), (blocker) => byId.get(blocker)) ?? `task #${id} was just claimed by another claimer` };
  }

  /** A row a claim statement took: applied to the replica and told. */
  private took(row: TaskRow & { taken_over: boolean }, role: string | undefined): ClaimResult {
    const task = this.apply(row);
    this.claimedBy(task, row.taken_over === true, role);
    return { ok: true, task };
  }

  /**
   * One statement when the replica's copy decides it (the row still holds that version), else a
   * row-locked read-check-write in one transaction, with the database's clock for the rules.
   */
  protected async mutate(id: number, change: (task: Task) => Task | Refusal): Promise<MutationResult> {
    const known = this.replica.get(id);
    const next = known && this.changed(id, known.task, this.clock.now(), change);
    if (known && next && !(next instanceof Refusal)) {
      const landed = await this.writeIfUnchanged(id, next, known.version);
      if (landed) return { ok: true, task: landed };
    }
    const outcome = await this.transaction(async (client) => {
      const { rows } = await client.query<TaskRow & { db_now: Date }>(`SELECT ${SELECTED}, now() AS db_now FROM autoteam_tasks WHERE id = $1 FOR UPDATE`, [id]);
      const row = rows[0];
      if (!row) return { result: { ok: false as const, reason: `task #${id} does not exist` } };
      const next = this.changed(id, toTask(row), row.db_now, change);
      if (next instanceof Refusal) {
        return { result: next.fenced ? { ok: false as const, reason: next.reason, fenced: true } : { ok: false as const, reason: next.reason }, row };
      }
      const saved = await client.query<TaskRow>(`UPDATE autoteam_tasks SET ${SET_ALL} WHERE id = $1 RETURNING ${SELECTED}`, [id, ...toRow(next)]);
      return { result: { ok: true as const }, row: saved.rows[0]! };
    });
    if (outcome.row) this.apply(outcome.row);
    return outcome.result.ok ? { ok: true, task: this.get(id) } : outcome.result;
  }

  /**
   * `next` written in one statement (UPDATE_IF_UNCHANGED) over the row at `version`: the task as written,
   * or null when it did not land. A reply lost with the connection is no answer: the write landed if the
   * task is now what it wrote (jsonb's key order aside), and is never made twice.
   */
  private async writeIfUnchanged(id: number, next: Task, version: number): Promise<Task | null> {
    const sentMs = Date.now();
    try {
      const { rows } = await this.pool.query<TaskRow & { db_now: Date }>(UPDATE_IF_UNCHANGED, [id, ...toRow(next), version]);
      if (!rows[0]) return null;
      this.clock.read(rows[0].db_now, sentMs);
      return this.apply(rows[0]);
    } catch (error) {
      if (!isConnectionError(error)) throw error;
      const { rows } = await this.query<TaskRow>(`SELECT ${SELECTED} FROM autoteam_tasks WHERE id = $1`, [id]);
      return rows[0] && isDeepStrictEqual(toTask(rows[0]), next) ? this.apply(rows[0]) : null;
    }
  }

  /**
   * `change` made to `task` by the rules at `clock` (or the task's last stamp, if that is later: a
   * task's stamps never go back), held to the size autoteam can read back, as it is stored.
   */
  private changed(id: number, task: Task, clock: Date, change: (task: Task) => Task | Refusal): Task | Refusal {
    const at = new Date(Math.max(clock.getTime(), Date.parse(task.updatedAt)));
    this.dbNow = at;
    try {
      const next = change(task);
      // Held to the size autoteam can read back (an export writes it as a file): trimmed, or refused.
      const sized = next instanceof Refusal ? next : this.sized(next);
      return sized instanceof Refusal ? sized : this.clean(TaskSchema.parse({ ...sized, id, updatedAt: at.toISOString() }));
    } finally {
      this.dbNow = null;
    }
  }

  /** Runs `work` holding a board-wide advisory lock named `name` (a session lock on one connection). */
  async withLock<T>(name: string, work: () => Promise<T>): Promise<T> {
    const client = await withConnectionRetry(this.url, () => this.pool.connect());
    try {
      await client.query("SELECT pg_advisory_lock(hashtext('autoteam_lock:' || $1))", [name]);
      try {
        return await work();
      } finally {
        await client.query("SELECT pg_advisory_unlock(hashtext('autoteam_lock:' || $1))", [name]).catch(() => undefined);
      }
    } finally {
      client.release();
    }
  }

  /** The next pipeline id, from a counter row: unique across every process and host. */
  async nextPipelineId(): Promise<number> {
    const { rows } = await this.query<{ value: number }>(
      `INSERT INTO autoteam_counters (name, value) VALUES ('pipeline', (SELECT COALESCE(max(pipeline), 0) + 1 FROM autoteam_tasks))
       ON CONFLICT (name) DO UPDATE SET value = autoteam_counters.value + 1 RETURNING value`,
    );
    return rows[0]!.value;
  }

  /** Secret-looking values never reach the database, as they never reach a task file. */
  private clean(task: Task): Task {
    return JSON.parse(this.redact(JSON.stringify(task))) as Task;
  }

  private transaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    return transaction(this.url, this.pool, work);
  }
}

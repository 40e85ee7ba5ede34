import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { isDeepStrictEqual } from 'node:util';
import type pg from 'pg';
import { NotFoundError } from '../../errors.js';
import { redact, secretValues } from '../../trace/redact.js';
import { ArtifactsSchema } from '../artifacts.js';
import { whyNotClaimable } from '../task-checks.js';
import { type Task, TaskSchema } from '../schemas.js';
import type { BoardProblem } from '../task-index.js';
import { createAfterUnderLock, DEFAULT_LEASE_MS, Refusal, type TaskBoardLike, TaskRules } from '../task-rules.js';
import { type BoardLockOptions, draftTask } from '../task-store.js';
import type { ClaimResult, CreateTaskInput, FollowUp, FollowUpOf, MutationResult, PostAfter, Posted, PostResult } from '../task-types.js';
import { createPool, describeUrl, isConnectionError, transaction, withConnectionRetry } from './connection.js';
import { DbClock } from './db-clock.js';
import { migrateWith } from './schema.js';
import { TaskReplica } from './task-replica.js';
import { CLAIM_EXPIRED, CLOCK_TOLERANCE_MS, CLAIM_ONE, CLAIM_PENDING, insertTask, postAfter, rowFromJson, rowObject, SELECTED, SET_ALL, type TaskRow, type TasksRead, toRow, toTask, UPDATE_IF_UNCHANGED, UPDATE_THEN_POST } from './task-sql.js';

export interface PgTaskBoardOptions {
  leaseMs?: number;
  /** Connections in this process's pool (claimers in one process share it). */
  poolSize?: number;
  /** The local folder for what stays on each host: workspaces, the trace, submission blobs. */
  rootDir?: string;
}

/** Tasks a process posts between two ANALYZEs of the tasks table. */
const ANALYZE_EVERY = 200;
/** How often a board-wide lock's wait that may be stopped asks again. */
const LOCK_POLL_MS = 200;

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
 * A stage's completion carries the next stage's task in its one statement (UPDATE_THEN_POST).
 */
export class PgTaskBoard extends TaskRules implements TaskBoardLike {
  protected readonly leaseMs: number;
  readonly rootDir: string;
  protected readonly redact: (text: string) => string;
  /** The database's clock during a mutation; the rules read it through now(). */
  private dbNow: Date | null = null;
  /** Tasks this process posted since it last had the tasks table analyzed (see create). */
  private postedSinceAnalyze = 0;
  private readonly clock = new DbClock();
  /** A statement, retried on a fresh connection when the connection failed. */
  private readonly query = <R extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<pg.QueryResult<R>> =>
    withConnectionRetry(this.url, () => this.pool.query<R>(text, values));
  private readonly replica = new TaskReplica(this.query, this.clock);
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

  /** Catches up with the database (TaskReplica.refresh); returns how many rows changed here. */
  refresh(ids?: readonly number[]): Promise<number> {
    return this.replica.refresh(ids);
  }

  /** Takes rows a notification carried, as a read's (the followers are told); returns how many changed here. */
  heard(rows: readonly TaskRow[]): number {
    return this.replica.heard(rows);
  }

  /** Every read from now on, as its rows and the ids it found gone; returns the unsubscribe. */
  onRead(listener: (read: TasksRead) => void): () => void {
    return this.replica.onRead(listener);
  }

  /** A follower's: takes a read another replica made (versions decide; a task found gone is dropped). */
  follow(read: TasksRead): number {
    return this.replica.follow(read);
  }

  list(): Task[] {
    return this.replica.list();
  }

  problems(): BoardProblem[] {
    return [];
  }

  get(id: number): Task {
    const entry = this.replica.known(id);
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
      const draft = draftTask(input, artifacts, blockedBy, clock[0]!.now.toISOString());
      const rows = await insertTask(client, this.clean(this.sizedNew(draft, input)));
      const blockers = blockedBy.length
        ? (await client.query<TaskRow>(`UPDATE autoteam_tasks SET blocks = array_append(blocks, $1) WHERE id = ANY ($2) AND NOT ($1 = ANY (blocks)) RETURNING ${SELECTED}`, [rows[0]!.id, blockedBy])).rows
        : [];
      return { row: rows[0]!, blockers };
    });
    for (const row of task.blockers) this.replica.apply(row);
    // Told before the count: an ANALYZE it may run must not hold back the post's event (pg-events.ts).
    const posted = this.replica.apply(task.row);
    this.posted(posted, input.by ?? 'lead');
    await this.counted();
    return posted;
  }

  /**
   * One round trip (autoteam_post_after), stamped by the database's clock. A reply lost with the
   * connection is asked again under the same call id: the task it posted is then found as its own.
   */
  async createAfter(input: CreateTaskInput, after: PostAfter): Promise<PostResult> {
    // Blockers are checked and told in create's transaction (a stage's next task has none).
    if (input.blockedBy?.length) return createAfterUnderLock(this, input, after);
    const draft = this.postDraft(input);
    const posted = await postAfter(this.query, after, draft, randomUUID());
    // A database whose transactions are not READ COMMITTED: the check would not see a post made while it waited.
    if (!posted) return createAfterUnderLock(this, input, after);
    const task = this.replica.apply(posted.row);
    if (posted.created) {
      this.posted(task, input.by ?? 'lead');
      await this.counted();
    }
    return { task, created: posted.created };
  }

  /** What createAfter sends autoteam_post_after for `input`: stamped by the database's clock as this process reckons it. */
  private postDraft(input: CreateTaskInput): Task {
    return this.clean(this.sizedNew(draftTask(input, ArtifactsSchema.parse(input.artifacts ?? {}), [], this.clock.now().toISOString()), input));
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
    const current = this.replica.apply(row);
    const blockers = current.blockedBy.length ? await this.query<TaskRow>(`SELECT ${SELECTED} FROM autoteam_tasks WHERE id = ANY ($1)`, [current.blockedBy]) : { rows: [] };
    const byId = new Map(blockers.rows.map((blocker) => [blocker.id, this.replica.apply(blocker)]));
    return { ok: false, reason: whyNotClaimable(current, options.role, row.db_now.getTime(), (blocker) => byId.get(blocker)) ?? `task #${id} was just claimed by another claimer` };
  }

  /** A row a claim statement took: applied to the replica and told. */
  private took(row: TaskRow & { taken_over: boolean }, role: string | undefined): ClaimResult {
    const task = this.replica.apply(row);
    this.claimedBy(task, row.taken_over === true, role);
    return { ok: true, task };
  }

  /**
   * One statement when the replica's copy decides it (the row still holds that version), else a
   * row-locked read-check-write in one transaction, with the database's clock for the rules.
   */
  protected async mutate(id: number, change: (task: Task) => Task | Refusal, _retries?: number, follow?: FollowUpOf): Promise<MutationResult & { posted?: Posted }> {
    const known = this.replica.known(id);
    const next = known && this.changed(id, known.task, this.clock.now(), change);
    const write = known && next && !(next instanceof Refusal) ? (follow ? await this.followUpAhead(id, { next, version: known.version }, change, follow) : { next, version: known.version, up: null }) : null;
    if (write) {
      const landed = write.up ? await this.writeThenPost(id, write.next, write.version, write.up) : { task: await this.writeIfUnchanged(id, write.next, write.version) };
      if (landed.task) return { ok: true, task: landed.task, ...(landed.posted ? { posted: landed.posted } : {}) };
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
    if (outcome.row) this.replica.apply(outcome.row);
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
      return this.replica.apply(rows[0]);
    } catch (error) {
      if (!isConnectionError(error)) throw error;
      return this.landedAs(id, next);
    }
  }

  /** Task `id` as the database holds it, if it is `next` (jsonb's key order aside): a write whose reply was lost landed. */
  private async landedAs(id: number, next: Task): Promise<Task | null> {
    const { rows } = await this.query<TaskRow>(`SELECT ${SELECTED} FROM autoteam_tasks WHERE id = $1`, [id]);
    return rows[0] && isDeepStrictEqual(toTask(rows[0]), next) ? this.replica.apply(rows[0]) : null;
  }

  /**
   * What follows `copy.next` (the change made to the replica's copy at `copy.version`), asked before
   * the write so that it goes in the same statement; `up` null when nothing follows, or when asking
   * failed (it is asked again after the write, as on the file board). Asking may take a while (a
   * stage's `prepare` reads the repository) while the copy's stamp ages or a lease renewal moves it:
   * the change is then made again on the copy as it is now, and goes with the follow-up only when
   * what the follow-up read of it is the same. Null when the rules now refuse it on the copy.
   */
  private async followUpAhead(
    id: number,
    copy: { next: Task; version: number },
    change: (task: Task) => Task | Refusal,
    follow: FollowUpOf,
  ): Promise<{ next: Task; version: number; up: FollowUp | null } | null> {
    let up = await follow(copy.next).catch(() => null);
    if (up?.input.blockedBy?.length) up = null;
    const now = this.replica.known(id);
    if (now?.version === copy.version && this.clock.now().getTime() - Date.parse(copy.next.updatedAt) < CLOCK_TOLERANCE_MS / 2) return { ...copy, up };
    const again = now && this.changed(id, now.task, this.clock.now(), change);
    if (!now || !again || again instanceof Refusal) return null;
    const read = ({ status, result, artifacts, revision, pipeline, stage, owner, subject, description }: Task) => JSON.stringify([status, result, artifacts, revision, pipeline, stage, owner, subject, description]);
    return { next: again, version: now.version, up: up && read(again) === read(copy.next) ? up : null };
  }

  /**
   * writeIfUnchanged, with `up` posted in the same statement (UPDATE_THEN_POST): the task as written
   * and what was posted, or null when the write did not land (nothing was posted then either). A
   * reply lost with the connection is no answer: the write landed if the task is now what it wrote,
   * and the post with it, which the same call then finds as its own. A database that refuses the
   * post (AT001) gets the write alone: the post follows it the locked way (completeThenPost).
   */
  private async writeThenPost(id: number, next: Task, version: number, up: FollowUp): Promise<{ task: Task | null; posted?: Posted }> {
    const draft = this.postDraft(up.input);
    const call = randomUUID();
    const by = up.input.by ?? 'lead';
    const posting = [up.after.pipeline, up.after.task, JSON.stringify(rowObject(draft)), call];
    const sentMs = Date.now();
    let rows: Array<TaskRow & { db_now: Date; posted: { created: boolean; row: Record<string, unknown> } }>;
    try {
      ({ rows } = await this.pool.query(UPDATE_THEN_POST, [id, ...toRow(next), version, ...posting]));
    } catch (error) {
      if ((error as { code?: string }).code === 'AT001') return { task: await this.writeIfUnchanged(id, next, version) };
      if (!isConnectionError(error)) throw error;
      const task = await this.landedAs(id, next);
      if (!task) return { task: null };
      const again = await postAfter(this.query, up.after, draft, call);
      return { task, ...(again ? { posted: { task: this.replica.apply(again.row), created: again.created, by } } : {}) };
    }
    const row = rows[0];
    if (!row) return { task: null };
    this.clock.read(row.db_now, sentMs);
    const task = this.replica.apply(row);
    const posted = { task: this.replica.apply(rowFromJson(row.posted.row)), created: row.posted.created, by };
    // Not waited for: its post is told after this returns, and an ANALYZE must not hold that back.
    if (posted.created) void this.counted();
    return { task, posted };
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
  async withLock<T>(name: string, work: () => Promise<T>, options: BoardLockOptions = {}): Promise<T> {
    const client = await withConnectionRetry(this.url, () => this.pool.connect());
    try {
      // A try first: a holder elsewhere is told (onBusy) before the wait, which has no end of its own;
      // a wait that may be stopped tries again every LOCK_POLL_MS instead.
      const attempt = async () => (await client.query<{ got: boolean }>("SELECT pg_try_advisory_lock(hashtext('autoteam_lock:' || $1)) AS got", [name])).rows[0]?.got === true;
      if (!(await attempt())) {
        options.onBusy?.();
        if (!options.signal) await client.query("SELECT pg_advisory_lock(hashtext('autoteam_lock:' || $1))", [name]);
        else while (!(await attempt())) await sleep(LOCK_POLL_MS, undefined, { signal: options.signal });
      }
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

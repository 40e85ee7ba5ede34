import path from 'node:path';
import type pg from 'pg';
import { AutoteamError, NotFoundError } from '../../errors.js';
import { redact, secretValues } from '../../trace/redact.js';
import { ArtifactsSchema } from '../artifacts.js';
import { type Task, TaskSchema } from '../schemas.js';
import type { BoardProblem } from '../task-index.js';
import { DEFAULT_LEASE_MS, Refusal, type TaskBoardLike, TaskRules } from '../task-rules.js';
import type { ClaimResult, CreateTaskInput, MutationResult } from '../task-types.js';
import { BoardConnectionError, createPool, describeUrl, transaction, withConnectionRetry } from './connection.js';
import { migrate } from './schema.js';

const COLUMNS =
  'id, subject, description, status, owner, role, stage, blocked_by, blocks, pipeline, revision, claims, lease_owner, lease_token, ' +
  'lease_until, attempts, not_before, handoff, artifacts, usage, result, history, created_at, updated_at';

const SELECTED = `${COLUMNS}, version`;

interface TaskRow {
  version?: string;
  id: number;
  subject: string;
  description: string;
  status: Task['status'];
  owner: string | null;
  role: string | null;
  stage: Task['stage'];
  blocked_by: number[];
  blocks: number[];
  pipeline: number | null;
  revision: number;
  claims: number;
  lease_owner: string | null;
  lease_token: number | null;
  lease_until: Date | null;
  attempts: number;
  not_before: Date | null;
  handoff: string;
  artifacts: Task['artifacts'];
  usage: Task['usage'];
  result: string | null;
  history: Task['history'];
  created_at: Date;
  updated_at: Date;
}

function toTask(row: TaskRow): Task {
  return {
    id: row.id,
    subject: row.subject,
    description: row.description,
    status: row.status,
    owner: row.owner,
    role: row.role,
    stage: row.stage,
    blockedBy: row.blocked_by,
    blocks: row.blocks,
    pipeline: row.pipeline,
    revision: row.revision,
    claims: row.claims,
    lease: row.lease_owner && row.lease_until ? { owner: row.lease_owner, token: row.lease_token ?? row.claims, until: row.lease_until.toISOString() } : null,
    attempts: row.attempts,
    notBefore: row.not_before?.toISOString() ?? null,
    handoff: row.handoff,
    artifacts: row.artifacts,
    usage: row.usage,
    result: row.result,
    history: row.history,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

/** The values of every column but id, in COLUMNS order, for an INSERT or UPDATE. */
function toRow(task: Task): unknown[] {
  return [
    task.subject,
    task.description,
    task.status,
    task.owner,
    task.role,
    task.stage,
    task.blockedBy,
    task.blocks,
    task.pipeline,
    task.revision,
    task.claims,
    task.lease?.owner ?? null,
    task.lease?.token ?? null,
    task.lease?.until ?? null,
    task.attempts,
    task.notBefore,
    task.handoff,
    JSON.stringify(task.artifacts),
    JSON.stringify(task.usage),
    task.result,
    JSON.stringify(task.history),
    task.createdAt,
    task.updatedAt,
  ];
}

const INSERTED = COLUMNS.split(', ').slice(1).join(', ');

/**
 * Inserts a task: a new one gets the next id, an imported one (`keepId`) keeps its own. Returns the
 * row as stored.
 */
export async function insertTask(client: pg.PoolClient, task: Task, keepId = false): Promise<TaskRow[]> {
  const values = keepId ? [task.id, ...toRow(task)] : toRow(task);
  const placeholders = values.map((_, i) => `$${i + 1}`).join(', ');
  const columns = keepId ? `id, ${INSERTED}` : INSERTED;
  const overriding = keepId ? ' OVERRIDING SYSTEM VALUE' : '';
  const { rows } = await client.query<TaskRow>(`INSERT INTO autoteam_tasks (${columns})${overriding} VALUES (${placeholders}) RETURNING ${SELECTED}`, values);
  return rows;
}

const SET_ALL = COLUMNS.split(', ')
  .slice(1)
  .map((column, i) => `${column} = $${i + 2}`)
  .join(', ');

/** A candidate's role, backoff and blockers, in SQL: the same rule as the file board's. */
const READY = `
  ($1::text IS NULL OR t.role IS NULL OR t.role = $1)
  AND (t.not_before IS NULL OR t.not_before <= now())
  AND CASE WHEN cardinality(t.blocked_by) = 0 THEN true
      ELSE cardinality(t.blocked_by) = (SELECT count(*) FROM autoteam_tasks b WHERE b.id = ANY (t.blocked_by) AND b.status = 'completed') END`;

/** Pending and unowned (read through the partial index on pending ids, in id order). */
const PENDING = `t.status = 'pending' AND t.owner IS NULL AND ${READY}`;
/** Claimed, but its lease ran out (no lease at all counts as expired: nothing would renew it). */
const EXPIRED = `t.status = 'in_progress' AND (t.lease_until IS NULL OR t.lease_until < now()) AND ${READY}`;
/** Claimable now: pending and unblocked, or with an expired lease. */
const CLAIMABLE = `((${PENDING}) OR (${EXPIRED}))`;

/** Takes the candidate row: a new token, a lease until the database's now() + lease, a history entry. */
const TAKE = `
  UPDATE autoteam_tasks t SET
    status = 'in_progress', owner = $2, claims = t.claims + 1,
    lease_owner = $2, lease_token = t.claims + 1, lease_until = now() + $3 * interval '1 millisecond',
    updated_at = now(),
    history = t.history || jsonb_build_array(jsonb_build_object(
      'at', to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'by', $2::text, 'event', 'claimed',
      'detail', CASE WHEN t.status = 'in_progress' AND t.owner IS NOT NULL
                     THEN 'lease of ' || t.owner || ' expired; taken over (token ' || (t.claims + 1) || ')'
                     ELSE 'token ' || (t.claims + 1) END))
  FROM candidate WHERE t.id = candidate.id
  RETURNING ${SELECTED.split(', ').map((c) => `t.${c}`).join(', ')}`;

/**
 * One statement: the first pending task nobody else is locking, taken and returned. A second one
 * (only when no task is pending) takes over an expired lease. Two statements instead of one OR, so
 * each reads its own partial index in order and stops at the first row.
 */
const CLAIM_PENDING = `WITH candidate AS (SELECT t.id FROM autoteam_tasks t WHERE ${PENDING} ORDER BY t.id LIMIT 1 FOR UPDATE SKIP LOCKED) ${TAKE}`;
const CLAIM_EXPIRED = `WITH candidate AS (SELECT t.id FROM autoteam_tasks t WHERE ${EXPIRED} ORDER BY t.lease_until NULLS FIRST, t.id LIMIT 1 FOR UPDATE SKIP LOCKED) ${TAKE}`;
const CLAIM_ONE = `WITH candidate AS (SELECT t.id FROM autoteam_tasks t WHERE t.id = $4 AND ${CLAIMABLE} FOR UPDATE) ${TAKE}`;

export interface PgTaskBoardOptions {
  leaseMs?: number;
  /** Connections in this process's pool (claimers in one process share it). */
  poolSize?: number;
  /** The local folder for what stays on each host: workspaces, the trace, submission blobs. */
  rootDir?: string;
}

/**
 * The task store on PostgreSQL. Claims are one statement (`FOR UPDATE SKIP LOCKED`, the pg-boss and
 * graphile-worker pattern), leases are measured by the database's clock, and every other write is a
 * row-locked read-check-write running the same rules as the file board (`TaskRules`), so a fenced
 * write changes nothing.
 *
 * Reads answer at once from a replica of the table: loaded at open, updated by this process's own
 * writes, and refreshed (only the rows whose `version` moved) on every notification and `refresh()`.
 * A read may lag another host's write by the notification's latency; every decision that matters is
 * taken in the database (claims, fences), or after `refresh()` under a lock (a pipeline's successor).
 */
export class PgTaskBoard extends TaskRules implements TaskBoardLike {
  protected readonly leaseMs: number;
  readonly rootDir: string;
  private readonly redact: (text: string) => string;
  /** The database's clock during a mutation; the rules read it through now(). */
  private dbNow: Date | null = null;
  private readonly replica = new Map<number, { task: Task; version: number }>();
  private sorted: Task[] | null = null;

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

  private ownsPool = false;

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

  /** Catches up with the database: the rows whose version moved (or `ids`), fetched and applied. Returns how many. */
  async refresh(ids?: readonly number[]): Promise<number> {
    let changed: number[];
    if (ids) {
      changed = [...ids];
    } else {
      const { rows } = await this.query<{ id: number; version: string }>('SELECT id, version FROM autoteam_tasks');
      const present = new Set(rows.map((row) => row.id));
      for (const id of this.replica.keys()) if (!present.has(id)) this.replica.delete(id);
      changed = rows.filter((row) => this.replica.get(row.id)?.version !== Number(row.version)).map((row) => row.id);
      if (rows.length !== this.replica.size || changed.length) this.sorted = null;
    }
    if (changed.length === 0) return 0;
    const { rows } = await this.query<TaskRow>(`SELECT ${SELECTED} FROM autoteam_tasks WHERE id = ANY ($1)`, [changed]);
    for (const row of rows) this.apply(row);
    return rows.length;
  }

  private apply(row: TaskRow): Task {
    const version = Number(row.version ?? 0);
    const current = this.replica.get(row.id);
    const task = toTask(row);
    // A slower reply must not put an older version back over a newer one.
    if (!current || current.version <= version) {
      this.replica.set(row.id, { task, version });
      this.sorted = null;
    }
    return task;
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
    return tasks.filter((task) => this.whyNotClaimable(task, role, nowMs, (id) => byId.get(id)) === null);
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
      const at = clock[0]!.now.toISOString();
      const draft: Task = TaskSchema.parse({
        id: 1,
        subject: input.subject,
        description: input.description ?? '',
        status: 'pending',
        role: input.role ?? null,
        stage: input.stage ?? null,
        blockedBy,
        pipeline: input.pipeline ?? null,
        revision: input.revision ?? 0,
        handoff: input.handoff ?? '',
        artifacts,
        history: [{ at, by: input.by ?? 'lead', event: 'created', detail: input.subject }],
        createdAt: at,
        updatedAt: at,
      });
      const rows = await insertTask(client, this.clean(draft));
      const blockers = blockedBy.length
        ? (await client.query<TaskRow>(`UPDATE autoteam_tasks SET blocks = array_append(blocks, $1) WHERE id = ANY ($2) AND NOT ($1 = ANY (blocks)) RETURNING ${SELECTED}`, [rows[0]!.id, blockedBy])).rows
        : [];
      return { row: rows[0]!, blockers };
    });
    for (const row of task.blockers) this.apply(row);
    return this.apply(task.row);
  }

  async claimNext(owner: string, role?: string): Promise<ClaimResult | null> {
    // Named statements: parsed and planned once per connection, not on every claim.
    for (const [name, text] of [['autoteam_claim_pending', CLAIM_PENDING], ['autoteam_claim_expired', CLAIM_EXPIRED]] as const) {
      const { rows } = await withConnectionRetry(this.url, () => this.pool.query<TaskRow>({ name, text, values: [role ?? null, owner, this.leaseMs] }));
      if (rows[0]) return { ok: true, task: this.apply(rows[0]) };
    }
    return null;
  }

  async claim(id: number, owner: string, options: { role?: string; tryOnce?: boolean } = {}): Promise<ClaimResult> {
    const { rows } = await this.query<TaskRow>(CLAIM_ONE, [options.role ?? null, owner, this.leaseMs, id]);
    if (rows[0]) return { ok: true, task: this.apply(rows[0]) };
    // Not taken: say why, by the same rule the statement applied, on fresh rows.
    await this.refresh();
    if (!this.replica.has(id)) return { ok: false, reason: `task #${id} does not exist` };
    const { rows: clock } = await this.query<{ now: Date }>('SELECT now()');
    const byId = new Map(this.list().map((task) => [task.id, task]));
    return { ok: false, reason: this.whyNotClaimable(this.get(id), options.role, clock[0]!.now.getTime(), (blocker) => byId.get(blocker)) ?? `task #${id} was just claimed by another claimer` };
  }

  /** Row-locked read-check-write in one transaction, with the database's clock for the rules. */
  protected async mutate(id: number, change: (task: Task) => Task | Refusal): Promise<MutationResult> {
    const outcome = await this.transaction(async (client) => {
      const { rows } = await client.query<TaskRow & { db_now: Date }>(`SELECT ${SELECTED}, now() AS db_now FROM autoteam_tasks WHERE id = $1 FOR UPDATE`, [id]);
      const row = rows[0];
      if (!row) return { result: { ok: false as const, reason: `task #${id} does not exist` } };
      this.dbNow = row.db_now;
      let next: Task | Refusal;
      try {
        next = change(toTask(row));
      } finally {
        this.dbNow = null;
      }
      if (next instanceof Refusal) {
        return { result: next.fenced ? { ok: false as const, reason: next.reason, fenced: true } : { ok: false as const, reason: next.reason }, row };
      }
      const written = this.clean(TaskSchema.parse({ ...next, id, updatedAt: row.db_now.toISOString() }));
      const saved = await client.query<TaskRow>(`UPDATE autoteam_tasks SET ${SET_ALL} WHERE id = $1 RETURNING ${SELECTED}`, [id, ...toRow(written)]);
      return { result: { ok: true as const, task: written }, row: saved.rows[0]! };
    });
    if (outcome.row) this.apply(outcome.row);
    return outcome.result.ok ? { ok: true, task: this.get(id) } : outcome.result;
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

/**
 * Creates or migrates the schema (`create`), or only checks that one is there (read-only commands
 * never turn a database into a board). Any failure — refused, bad password, no such database, no
 * right to create tables — is one line naming the board.
 */
export async function migrateWith(url: string, pool: pg.Pool, options: { create?: boolean } = {}): Promise<void> {
  try {
    await withConnectionRetry(url, async () => {
      const client = await pool.connect();
      try {
        if (options.create === false) {
          const { rows } = await client.query<{ found: string | null }>("SELECT to_regclass('autoteam_schema') AS found");
          if (!rows[0]?.found) throw new AutoteamError(`there is no autoteam board in ${describeUrl(url)} (a lead or a worker creates one; autoteam import loads one)`, 'NOT_FOUND');
        }
        await migrate(client);
      } finally {
        client.release();
      }
    });
  } catch (error) {
    if (error instanceof AutoteamError) throw error;
    throw new BoardConnectionError(url, error);
  }
}

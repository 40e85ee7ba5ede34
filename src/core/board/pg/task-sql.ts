import type pg from 'pg';
import type { Task } from '../schemas.js';
import type { PostAfter } from '../task-types.js';

/**
 * The tasks table in SQL: its columns, a row ↔ Task mapping, and the claim statements. The claim
 * rule here is the file board's (`whyNotClaimable` in task-checks.ts), written for the database.
 */

export const COLUMNS =
  'id, subject, description, status, owner, role, stage, blocked_by, blocks, pipeline, revision, claims, lease_owner, lease_token, ' +
  'lease_until, attempts, not_before, handoff, artifacts, usage, result, history, created_at, updated_at';

export const SELECTED = `${COLUMNS}, version`;
/** SELECTED on the tasks table aliased `t`. */
export const SELECTED_T = SELECTED.split(', ').map((c) => `t.${c}`).join(', ');

/**
 * Catching up (`refresh()`). Each read also returns its snapshot's horizon: the oldest transaction
 * still running then (32 bits, as a row's `xmin`). A change the read did not see was made by a
 * transaction at or past that horizon, so the next read fetches only rows whose `xmin` is: whatever
 * order the writers commit in, none is missed. The one-row `h` makes the horizon come back with no
 * row changed. Without a horizon (the first read) it is every row. It brings the database's clock
 * too (`db_now`, as the statement runs, past any wait for a lock), for the board's DbClock.
 */
const HORIZON = `(SELECT (pg_snapshot_xmin(pg_current_snapshot())::text::bigint % 4294967296)::text AS horizon, clock_timestamp() AS db_now) h`;
export const CHANGED_SINCE = `SELECT h.horizon, h.db_now, ${SELECTED_T} FROM ${HORIZON}
  LEFT JOIN autoteam_tasks t ON age(t.xmin) <= age($1::text::xid)`;
/** Every row's id and version (finds rows deleted by hand), with the horizon. */
export const ALL_VERSIONS = `SELECT h.horizon, h.db_now, t.id, t.version FROM ${HORIZON} LEFT JOIN autoteam_tasks t ON true`;

export interface TaskRow {
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

export function toTask(row: TaskRow): Task {
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

/** What one read of the replica brought, as it hands it to the replicas that follow it: the rows read, and the ids found gone. */
export interface TasksRead {
  rows: readonly TaskRow[];
  gone: readonly number[];
}

/** A task's row as its change's notification carries it (`row:` and the row as JSON, schema version 4). */
export function rowFromNotice(json: string): TaskRow {
  return rowFromJson(JSON.parse(json) as Record<string, unknown>);
}

/** A task's row as JSON made it (`row_to_json`, `to_jsonb`): its times as Dates, its version as pg returns a bigint. */
export function rowFromJson(json: Record<string, unknown>): TaskRow {
  const row = { ...json };
  for (const column of ['lease_until', 'not_before', 'created_at', 'updated_at'] as const) {
    const value = row[column];
    if (typeof value === 'string') row[column] = new Date(value);
  }
  return { ...row, version: String(row.version) } as unknown as TaskRow;
}

/**
 * Posts a task unless the pipeline holds the one that follows task $2 already (autoteam_post_after,
 * schema version 6), in one round trip: `{created, row}`, the row posted or found; $4 names the call,
 * so that its retry finds its own post as created.
 */
export const POST_AFTER = 'SELECT autoteam_post_after($1, $2, $3::jsonb, $4) AS posted';

/**
 * `draft` posted by POST_AFTER as call `call`: whether this call posted it, and the row posted or
 * found; null when the database refuses it (AT001: its transactions are not READ COMMITTED).
 */
export async function postAfter(
  query: (text: string, values: unknown[]) => Promise<{ rows: unknown[] }>,
  after: PostAfter,
  draft: Task,
  call: string,
): Promise<{ created: boolean; row: TaskRow } | null> {
  try {
    const { rows } = await query(POST_AFTER, [after.pipeline, after.task, JSON.stringify(rowObject(draft)), call]);
    const { posted } = rows[0] as { posted: { created: boolean; row: Record<string, unknown> } };
    return { created: posted.created, row: rowFromJson(posted.row) };
  } catch (error) {
    if ((error as { code?: string }).code === 'AT001') return null;
    throw error;
  }
}

/** The task's row as JSON, every column but id (for jsonb_populate_record). */
export function rowObject(task: Task): Record<string, unknown> {
  const values = rowValues(task);
  return Object.fromEntries(INSERTED.split(', ').map((column, i) => [column, values[i]]));
}

/** The values of every column but id, in COLUMNS order, for an INSERT or UPDATE (jsonb as its text). */
export function toRow(task: Task): unknown[] {
  return rowValues(task).map((value, i) => (JSONB_AT.has(i) ? JSON.stringify(value) : value));
}

/** Where in rowValues the jsonb columns are. */
const JSONB_AT = new Set(['artifacts', 'usage', 'history'].map((column) => COLUMNS.split(', ').indexOf(column) - 1));

/** The values of every column but id, in COLUMNS order. */
function rowValues(task: Task): unknown[] {
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
    task.artifacts,
    task.usage,
    task.result,
    task.history,
    task.createdAt,
    task.updatedAt,
  ];
}

export const INSERTED = COLUMNS.split(', ').slice(1).join(', ');

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

export const SET_ALL = COLUMNS.split(', ')
  .slice(1)
  .map((column, i) => `${column} = $${i + 2}`)
  .join(', ');

/** How far the time a write was stamped with (DbClock's) may be from the database's clock as it runs. */
export const CLOCK_TOLERANCE_MS = 1_000;

/**
 * Writes every column of task `$1` only while its row holds the version read (the last parameter),
 * and while the time it is stamped with (`updated_at`, the last column) is within CLOCK_TOLERANCE_MS
 * of the database's clock; returns the row and that clock.
 */
export const UPDATE_IF_UNCHANGED = `UPDATE autoteam_tasks SET ${SET_ALL}
  WHERE id = $1 AND version = $${COLUMNS.split(', ').length + 1}
    AND abs(extract(epoch FROM clock_timestamp() - $${COLUMNS.split(', ').length}::timestamptz)) * 1000 < ${CLOCK_TOLERANCE_MS}
  RETURNING ${SELECTED}, clock_timestamp() AS db_now`;

/** The last parameter of UPDATE_IF_UNCHANGED (the version it writes over). */
const UPDATE_PARAMETERS = COLUMNS.split(', ').length + 1;

/**
 * UPDATE_IF_UNCHANGED and, when it lands, the task that follows posted by autoteam_post_after in the
 * same statement (one transaction): the row written, its `db_now`, and `posted`, the function's
 * `{created, row}`. Its parameters after UPDATE_IF_UNCHANGED's are POST_AFTER's.
 */
export const UPDATE_THEN_POST = `WITH done AS (${UPDATE_IF_UNCHANGED})
  SELECT done.*, autoteam_post_after($${UPDATE_PARAMETERS + 1}, $${UPDATE_PARAMETERS + 2}, $${UPDATE_PARAMETERS + 3}::jsonb, $${UPDATE_PARAMETERS + 4}) AS posted FROM done`;

/** A candidate's role, backoff and blockers, in SQL: the same rule as the file board's. */
export const READY = `
  ($1::text IS NULL OR $1 = 'any' OR t.role IS NULL OR t.role = $1)
  AND (t.not_before IS NULL OR t.not_before <= now())
  AND CASE WHEN cardinality(t.blocked_by) = 0 THEN true
      ELSE cardinality(t.blocked_by) = (SELECT count(*) FROM autoteam_tasks b WHERE b.id = ANY (t.blocked_by) AND b.status = 'completed') END`;

/** Pending and unowned (read through the partial index on pending ids, in id order). */
export const PENDING = `t.status = 'pending' AND t.owner IS NULL AND ${READY}`;
/** Claimed, but its lease ran out (no lease at all counts as expired: nothing would renew it). */
export const EXPIRED = `t.status = 'in_progress' AND (t.lease_until IS NULL OR t.lease_until < now()) AND ${READY}`;
/** Claimable now: pending and unblocked, or with an expired lease. */
export const CLAIMABLE = `((${PENDING}) OR (${EXPIRED}))`;

/** Takes the candidate row: a new token, a lease until the database's now() + lease, a history entry. */
export const TAKE = `
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
  RETURNING ${SELECTED_T}, candidate.was = 'in_progress' AS taken_over`;

/**
 * One statement: the first pending task nobody else is locking, taken and returned. A second one
 * (only when no task is pending) takes over an expired lease. Two statements instead of one OR, so
 * each reads its own partial index in order and stops at the first row.
 */
export const CLAIM_PENDING = `WITH candidate AS (SELECT t.id, t.status AS was FROM autoteam_tasks t WHERE ${PENDING} ORDER BY t.id LIMIT 1 FOR UPDATE SKIP LOCKED) ${TAKE}`;
export const CLAIM_EXPIRED = `WITH candidate AS (SELECT t.id, t.status AS was FROM autoteam_tasks t WHERE ${EXPIRED} ORDER BY t.lease_until NULLS FIRST, t.id LIMIT 1 FOR UPDATE SKIP LOCKED) ${TAKE}`;
export const CLAIM_ONE = `WITH candidate AS (SELECT t.id, t.status AS was FROM autoteam_tasks t WHERE t.id = $4 AND ${CLAIMABLE} FOR UPDATE) ${TAKE}`;

import type pg from 'pg';
import type { Task } from '../schemas.js';
import type { DbClock } from './db-clock.js';
import { Sightings } from './sightings.js';
import { ALL_VERSIONS, CHANGED_SINCE, SELECTED, type TaskRow, type TasksRead, toTask } from './task-sql.js';

/** How often refresh() compares every row's version rather than reading what changed. */
const FULL_COMPARE_MS = 30_000;

type Query = <R extends pg.QueryResultRow>(text: string, values?: unknown[]) => Promise<pg.QueryResult<R>>;

/**
 * A process's copy of the tasks table (PgTaskBoard's reads answer from it): loaded at open, and
 * updated by this process's own statements (`apply`), by the rows notifications carry (`heard`), by
 * reads of what changed (`refresh`), or by another replica's reads (`follow`: a teammate thread's
 * copy follows its process's). Versions decide: an older row never goes back over a newer one.
 */
export class TaskReplica {
  private readonly tasks = new Map<number, { task: Task; version: number }>();
  private sorted: Task[] | null = null;
  /** The horizon of the last read (see CHANGED_SINCE), and when every version was last compared. */
  private horizon: string | null = null;
  private comparedAt = 0;
  /** When the replica last took each task (a full comparison does not drop one it took meanwhile). */
  private readonly seen = new Sightings<number>();
  /** Told every read (rows and what was found gone), for the replicas that follow this one. */
  private readonly readers = new Set<(read: TasksRead) => void>();

  constructor(
    private readonly query: Query,
    private readonly clock: DbClock,
  ) {}

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
      if (this.tasks.delete(id)) changed++;
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
    for (const id of this.tasks.keys()) {
      // A task the replica took after the read began (one this process just posted) is not gone.
      if (present.has(id) || this.seen.since(id, started)) continue;
      this.tasks.delete(id);
      this.sorted = null;
      gone.push(id);
    }
    const stale = rows.filter((row) => row.id !== null && this.tasks.get(row.id)?.version !== Number(row.version)).map((row) => row.id!);
    const fetched = stale.length ? (await this.query<TaskRow>(`SELECT ${SELECTED} FROM autoteam_tasks WHERE id = ANY ($1)`, [stale])).rows : [];
    this.horizon = rows[0]!.horizon;
    this.comparedAt = Date.now();
    return this.read(fetched, gone);
  }

  /** Puts `row` in the replica unless it holds that version or a newer one; true when it changed. */
  private take(row: TaskRow): boolean {
    const version = Number(row.version ?? 0);
    const current = this.tasks.get(row.id);
    // A slower reply must not put an older version back over a newer one.
    if (current && current.version >= version) return false;
    this.tasks.set(row.id, { task: toTask(row), version });
    this.seen.saw(row.id);
    this.sorted = null;
    return true;
  }

  /** The task in `row`, which this process's own statement returned: taken into the replica when it is newer. */
  apply(row: TaskRow): Task {
    // Seen even when the replica held that version: the row exists after any read begun before.
    this.seen.saw(row.id);
    this.take(row);
    const current = this.tasks.get(row.id)!;
    return current.version === Number(row.version ?? 0) ? current.task : toTask(row);
  }

  list(): Task[] {
    this.sorted ??= [...this.tasks.values()].map((entry) => entry.task).sort((a, b) => a.id - b.id);
    return this.sorted;
  }

  /** Task `id` as this replica holds it, with the version it was read at. */
  known(id: number): { task: Task; version: number } | undefined {
    return this.tasks.get(id);
  }
}

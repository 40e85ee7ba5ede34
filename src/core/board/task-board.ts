import fs from 'node:fs';
import path from 'node:path';
import { NotFoundError } from '../errors.js';
import { redact, secretValues } from '../trace/redact.js';
import { writeJsonAtomic } from './atomic-io.js';
import { MAX_TASK_FILE_BYTES, ownTask, readTaskFile } from './task-file.js';
import { takeNext } from './counter.js';
import { DEFAULT_LOCK_STALE_MS, isLockBusy, withLock } from './lock.js';
import { type BoardProblem, journalWrite, TASK_FILE, TaskIndex } from './task-index.js';

import { ArtifactsSchema } from './artifacts.js';
import { whyNotClaimable } from './task-checks.js';
import { type Task, TaskSchema } from './schemas.js';
import type { ClaimResult, CreateTaskInput, MutationResult, PostAfter, PostResult, TaskBoardOptions } from './task-types.js';
import { createAfterUnderLock, DEFAULT_LEASE_MS, Refusal, type TaskBoardLike, TaskRules } from './task-rules.js';
import { type BoardLockOptions, draftTask } from './task-store.js';

export type { BoardProblem } from './task-index.js';
export type * from './task-types.js';





/**
 * The board: one JSON file per task in `<root>/.tasks`. Reads are synchronous against an index that
 * re-reads only files whose inode, size or mtime changed (every write renames a new inode in).
 * Writes are read-check-write under a per-file lock, shared safely across threads and processes.
 */
export class TaskBoard extends TaskRules implements TaskBoardLike {
  readonly rootDir: string;
  readonly dir: string;
  private readonly clock: () => Date;
  protected readonly leaseMs: number;
  private readonly lockStaleMs: number;
  private readonly index: TaskIndex;
  /** The last scan's claimable tasks of a role, each with the version the scan saw. */
  private candidates: { role: string | undefined; tasks: Array<{ id: number; version: string | undefined }> } | null = null;
  /** Secret-looking environment values never reach a task file, whatever a tool or model put in it. */
  protected readonly redact: (text: string) => string;

  constructor(rootDir: string, options: TaskBoardOptions = {}) {
    super();
    this.rootDir = path.resolve(rootDir);
    this.dir = path.join(this.rootDir, '.tasks');
    this.clock = options.now ?? (() => new Date());
    this.leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.lockStaleMs = options.lockStaleMs ?? DEFAULT_LOCK_STALE_MS;
    this.index = new TaskIndex(this.dir, options.onProblem, options.sweepMs);
    const secrets = secretValues();
    this.redact = (text) => redact(text, secrets);
    fs.mkdirSync(this.dir, { recursive: true });
  }

  get location(): string {
    return this.rootDir;
  }

  protected now(): Date {
    return this.clock();
  }

  /** Reads are fresh from the files already. */
  async refresh(): Promise<void> {}

  async withLock<T>(name: string, work: () => Promise<T>, { patient, ...options }: BoardLockOptions = {}): Promise<T> {
    // A holder that died is still taken over after the stale time: patience waits out live ones only.
    return withLock(path.join(this.dir, name), work, { staleMs: this.lockStaleMs, ...options, ...(patient ? { retries: Number.POSITIVE_INFINITY } : {}) });
  }

  /** The next pipeline id: a counter file under a lock, never one a task on the board already has. */
  async nextPipelineId(): Promise<number> {
    const used = () => new Set(this.list().flatMap((task) => (task.pipeline ? [task.pipeline] : [])));
    return withLock(path.join(this.dir, 'pipelines'), () =>
      takeNext(path.join(this.dir, '.next-pipeline'), (n) => used().has(n), () => Math.max(0, ...used()) + 1),
    );
  }

  taskPath(id: number): string {
    return path.join(this.dir, `task_${id}.json`);
  }

  /** Every valid task, by id. Invalid files are skipped and listed by `problems()`. */
  list(): Task[] {
    return this.index.list();
  }

  /** Files that failed to parse or validate at the last refresh. */
  problems(): BoardProblem[] {
    return this.index.problems();
  }

  /** Reads one task fresh from disk. Throws NotFoundError, or BoardFileError for a bad file. */
  get(id: number): Task {
    const file = this.taskPath(id);
    if (!fs.existsSync(file)) throw new NotFoundError(`task #${id} does not exist (${file})`);
    return this.read(id, file);
  }

  /** Task `id` from its file, which must hold that id (the list leaves out one that does not, as the index does). */
  private read(id: number, file: string): Task {
    return ownTask(file, id, readTaskFile(file, MAX_TASK_FILE_BYTES, (stat) => this.index.holds(id, stat)));
  }

  /** Tasks that `owner` with `role` could claim now: pending and unblocked, or with an expired lease. */
  scanUnclaimed(role?: string): Task[] {
    const tasks = this.list();
    const byId = new Map(tasks.map((task) => [task.id, task]));
    const nowMs = this.now().getTime();
    return tasks.filter((task) => whyNotClaimable(task, role, nowMs, (id) => byId.get(id)) === null);
  }

  async create(input: CreateTaskInput): Promise<Task> {
    const blockedBy = [...new Set(input.blockedBy ?? [])];
    for (const blocker of blockedBy) {
      if (!fs.existsSync(this.taskPath(blocker))) {
        throw new NotFoundError(`blockedBy: task #${blocker} does not exist`);
      }
    }
    const by = input.by ?? 'lead';
    // Validated (and its size checked) before an id is taken, so bad input never leaves a gap in the ids.
    const artifacts = ArtifactsSchema.parse(input.artifacts ?? {});
    const draft = draftTask(input, artifacts, blockedBy, this.now().toISOString());
    const sized = this.sizedNew(draft, input);
    // The id is taken under the lock, and is this post's once the counter moved past it: its post
    // waits for the log (announce) outside it, so other posts are not queued behind that wait.
    const id = await withLock(
      path.join(this.dir, 'ids'),
      () =>
        takeNext(
          path.join(this.dir, '.next-id'),
          (n) => fs.existsSync(this.taskPath(n)),
          () => Math.max(0, ...fs.readdirSync(this.dir).map((name) => Number(TASK_FILE.exec(name)?.[1] ?? 0))) + 1,
        ),
      { staleMs: this.lockStaleMs },
    );
    const at = this.now().toISOString();
    const task: Task = TaskSchema.parse({ ...sized, id, history: sized.history.map((entry) => ({ ...entry, at })), createdAt: at, updatedAt: at });
    await this.announce(task, by);
    this.write(task);
    for (const blocker of blockedBy) {
      await this.mutate(blocker, (current) => ({
        ...current,
        blocks: [...new Set([...current.blocks, task.id])],
      }));
    }
    return task;
  }

  createAfter(input: CreateTaskInput, after: PostAfter): Promise<PostResult> {
    return createAfterUnderLock(this, input, after);
  }

  /** Claims task `id` for `owner`: lock, read, check, write, unlock. Never claims twice. */
  async claim(id: number, owner: string, options: { role?: string; tryOnce?: boolean } = {}): Promise<ClaimResult> {
    try {
      let takeover = false;
      const result = await this.mutate(
        id,
        (task) => {
          const reason = whyNotClaimable(task, options.role, this.now().getTime(), (blocker) =>
            this.readOrUndefined(blocker),
          );
          if (reason) return new Refusal(reason);
          takeover = task.status === 'in_progress';
          return this.claimed(task, owner);
        },
        options.tryOnce ? 0 : undefined,
      );
      if (result.ok) this.claimedBy(result.task, takeover, options.role);
      return result;
    } catch (error) {
      if (isLockBusy(error)) return { ok: false, reason: `task #${id} is locked by another claimer` };
      throw error;
    }
  }

  /**
   * Claims the first claimable task for `role`. Candidates from one scan are kept and tried in turn
   * (a claim re-validates under the lock, so a stale candidate is only a wasted try), each checked
   * first with a stat so tasks taken by others are skipped without locking. Oldest first, as the
   * PostgreSQL board claims: a try-lock that finds the lock busy moves on to the next task (its SKIP
   * LOCKED), so concurrent claimers do not queue on the first file.
   */
  async claimNext(owner: string, role?: string): Promise<ClaimResult | null> {
    for (let round = 0; round < 3; round++) {
      const cached = this.candidates && this.candidates.role === role ? this.candidates.tasks : [];
      if (cached.length === 0) {
        const tasks = this.scanUnclaimed(role).map((task) => ({ id: task.id, version: this.index.versionOf(task.id) }));
        if (tasks.length === 0) return null;
        this.candidates = { role, tasks };
      }
      const queue = this.candidates!.tasks;
      while (queue.length > 0) {
        const { id, version } = queue.shift()!;
        // A file rewritten since the scan was almost surely claimed by someone else: skip it
        // without reading it. Skipping is always safe; the next scan sees it again if it is free.
        // The version is the scan's: the index may have read the claim's journal line since.
        if (this.index.changedSince(id, version)) continue;
        const result = await this.claim(id, owner, { role, tryOnce: true });
        if (result.ok) return result;
      }
    }
    return null;
  }

  /**
   * A full sweep first: the journal tells readers of every write, except one whose writer was killed
   * after renaming the task in and before appending its line (a SIGKILL mid-claim). That writer's
   * tasks are the ones a dead owner's hand-back is for, and the index would see them only at its next
   * sweep (up to DEFAULT_SWEEP_MS later): the claim looked like none, and the task stayed held.
   */
  protected override listAll(): Task[] {
    this.index.sweepNow();
    return this.index.list();
  }

  /** Read-check-write of one task under its lock; a Refusal leaves the file untouched. */
  protected async mutate(id: number, change: (task: Task) => Task | Refusal, retries?: number): Promise<MutationResult> {
    const file = this.taskPath(id);
    if (!fs.existsSync(file)) return { ok: false, reason: `task #${id} does not exist` };
    return withLock(
      file,
      () => {
        // A version the index holds was validated already: read, not validated again.
        const current = this.read(id, file);
        const next = change(current);
        // Held to the size autoteam can read back: trimmed, or refused.
        const sized = next instanceof Refusal ? next : this.sized(next);
        if (sized instanceof Refusal) return sized.fenced ? { ok: false as const, reason: sized.reason, fenced: true } : { ok: false as const, reason: sized.reason };
        // Validated before it is written: a bad artifact is the caller's error, never an unreadable file.
        const written: Task = TaskSchema.parse({ ...sized, updatedAt: this.now().toISOString() });
        this.write(written);
        return { ok: true as const, task: written };
      },
      { staleMs: this.lockStaleMs, retries },
    );
  }

  /** Writes the task's file, then its journal line (the same version, redacted the same way). */
  private write(task: Task): void {
    const stat = writeJsonAtomic(this.taskPath(task.id), task, this.redact);
    journalWrite(this.dir, task.id, { stat, json: this.redact(JSON.stringify(task)) });
  }

  private readOrUndefined(id: number): Task | undefined {
    try {
      return this.get(id);
    } catch {
      return undefined;
    }
  }

}

import type { Artifacts } from './artifacts.js';
import type { EventSink } from '../events/emitter.js';
import type { ReleaseKind } from '../events/schema.js';
import { type Task, TaskSchema, type TaskUsage } from './schemas.js';
import type { BoardProblem } from './task-index.js';
import type { ClaimResult, CompletionResult, CreateTaskInput, Fence, FollowUpOf, MutationResult, PostAfter, PostResult, TaskPatch, UpdateOptions } from './task-types.js';

type Awaitable<T> = T | Promise<T>;

/** How `withLock` waits for another holder (TaskStore.withLock). */
export interface BoardLockOptions {
  onBusy?: () => void;
  signal?: AbortSignal;
  patient?: boolean;
}

/**
 * The task half of the Board interface: what the runtime may do with tasks, whatever stores them.
 * Reads may answer at once (the file board) or later (PostgreSQL): callers always `await` them.
 */
export interface TaskStore {
  /** Where the board is: a directory, or a postgres:// URL with the password hidden. */
  readonly location: string;
  list(): Awaitable<Task[]>;
  get(id: number): Awaitable<Task>;
  scanUnclaimed(role?: string): Awaitable<Task[]>;
  create(input: CreateTaskInput): Promise<Task>;
  /**
   * Posts `input`, the task that follows task `after.task` of pipeline `after.pipeline`, unless any
   * process posted one already: that one is returned then, with `created` false. Check and post are
   * one step under the pipeline's lock (`withLock('pipeline-<n>')`).
   */
  createAfter(input: CreateTaskInput, after: PostAfter): Promise<PostResult>;
  claim(id: number, owner: string, options?: { role?: string; tryOnce?: boolean }): Promise<ClaimResult>;
  claimNext(owner: string, role?: string): Promise<ClaimResult | null>;
  complete(id: number, fence: Fence | string, result?: string, artifacts?: Artifacts, next?: number): Promise<MutationResult>;
  /**
   * `complete`, then the task `follow` makes of the completed one posted as `createAfter` posts it.
   * `completed` is told of the completed task before the post is (its events come first). Where the
   * completion is written in one statement, PostgreSQL posts in that statement too: `follow` is then
   * asked before the write, of the task as it will be, and again after it if the statement misses.
   */
  completeThenPost(id: number, fence: Fence, result: string, artifacts: Artifacts, next: { follow: FollowUpOf; completed?: (done: Task) => void }): Promise<CompletionResult>;
  fail(id: number, fence: Fence | string, reason: string, artifacts?: Artifacts): Promise<MutationResult>;
  release(id: number, fence: Fence | string, reason?: string, kind?: ReleaseKind): Promise<MutationResult>;
  reclaimFrom(id: number, owner: string, reason: string, by?: string, token?: number, kind?: ReleaseKind): Promise<MutationResult>;
  reclaimAllFrom(owner: string, reason: string, kind?: ReleaseKind): Promise<number[]>;
  renewLease(id: number, fence: Fence): Promise<MutationResult>;
  retryLater(id: number, fence: Fence, reason: string, retryAt: Date, kind?: 'unfinished' | 'error'): Promise<MutationResult>;
  cancel(id: number, by: string, reason: string): Promise<MutationResult>;
  /** Notes a model call of task `id`; its next write through this board carries it. */
  recordUsage(id: number, delta: { inputTokens: number; outputTokens: number }): void;
  /** What task `id` spent that this board has not written yet. */
  unwrittenUsage(id: number): TaskUsage;
  /** Writes what recordUsage noted for task `id` and no write carried yet. */
  flushUsage(id: number): Promise<void>;
  update(id: number, patch: TaskPatch, options?: UpdateOptions): Promise<MutationResult>;
  /** Tells every change made through this board to `sink` (the board's events) from now on. */
  emitTo(sink: EventSink | null): void;
  /** Catches up with writes of other processes (the file board reads fresh anyway). */
  refresh(): Promise<unknown>;
  /**
   * Runs `work` holding the board-wide lock `name` (a lock file, or an advisory lock); `onBusy` is
   * told once when another holds it and the wait begins, and `signal` ends the wait (`work` not run).
   * A lock file's wait gives up after some 25 s (its retries, sized to take over the lock of a holder
   * that died), unless `patient`: then it waits as long as a live holder holds it, as an advisory
   * lock's wait always does.
   */
  withLock<T>(name: string, work: () => Promise<T>, options?: BoardLockOptions): Promise<T>;
  /** A pipeline id no process has used on this board. */
  nextPipelineId(): Promise<number>;
}

/**
 * The task board as the runtime uses it: the TaskStore with reads that answer at once — the file
 * board reads its files, the PostgreSQL board its replica — and the local folder for workspaces.
 */
export interface TaskBoardLike extends TaskStore {
  readonly rootDir: string;
  list(): Task[];
  get(id: number): Task;
  scanUnclaimed(role?: string): Task[];
  problems(): BoardProblem[];
}

/** `createAfter` as every backend can make it: under the pipeline's lock, on a fresh read of the board. */
export function createAfterUnderLock(
  store: Pick<TaskStore, 'withLock' | 'refresh' | 'list' | 'create'>,
  input: CreateTaskInput,
  after: PostAfter,
): Promise<PostResult> {
  return store.withLock(`pipeline-${after.pipeline}`, async () => {
    // Fresh under the lock: a task another process just posted must be seen.
    await store.refresh();
    const existing = (await store.list()).find((task) => task.pipeline === after.pipeline && task.artifacts.from === after.task);
    return existing ? { task: existing, created: false } : { task: await store.create(input), created: true };
  });
}

/** The task `input` posts, before its id (1 here) and its size are decided, stamped `at` (every backend's create). */
export function draftTask(input: CreateTaskInput, artifacts: Artifacts, blockedBy: number[], at: string): Task {
  return TaskSchema.parse({
    id: 1,
    subject: input.subject,
    description: input.description ?? '',
    status: 'pending',
    owner: null,
    role: input.role ?? null,
    stage: input.stage ?? null,
    blockedBy,
    blocks: [],
    pipeline: input.pipeline ?? null,
    revision: input.revision ?? 0,
    claims: 0,
    lease: null,
    handoff: input.handoff ?? '',
    artifacts,
    result: null,
    history: [{ at, by: input.by ?? 'lead', event: 'created', detail: input.subject }],
    notBefore: input.notBefore ?? null,
    createdAt: at,
    updatedAt: at,
  });
}

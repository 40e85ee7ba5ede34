import { TaskTooLargeError } from '../errors.js';
import { formatBytes, formatLimit } from '../sizes.js';
import type { Artifacts } from './artifacts.js';
import type { EventSink } from '../events/emitter.js';
import type { EventInput, ReleaseKind } from '../events/schema.js';
import type { HistoryEntry, Task, TaskStatus, TaskUsage } from './schemas.js';
import { addTaskUsage, UnwrittenUsage } from './unwritten-usage.js';
import { fenceRefusal, Refusal } from './task-checks.js';
import { fitTask, MAX_POSTED_TASK_BYTES, MAX_TASK_WRITE_BYTES, taskBytes } from './task-size.js';
import type { CompletionResult, CreateTaskInput, Fence, FollowUpOf, MutationResult, PostAfter, Posted, PostResult, TaskPatch, UpdateOptions } from './task-types.js';
import type { TaskStore } from './task-store.js';

export { Refusal } from './task-checks.js';
// The task store's interfaces (task-store.ts), which callers import with the rules.
export { createAfterUnderLock, type TaskBoardLike, type TaskStore } from './task-store.js';

type Awaitable<T> = T | Promise<T>;

export const DEFAULT_LEASE_MS = 30_000;

/**
 * The rules every backend shares — fencing, claimability, what each write does to a task — over one
 * primitive a backend provides: `mutate`, a read-check-write of one task that is atomic against every
 * other writer (a file lock, or a row lock in a transaction).
 */
export abstract class TaskRules
  implements Omit<TaskStore, 'location' | 'list' | 'get' | 'scanUnclaimed' | 'create' | 'createAfter' | 'claim' | 'claimNext' | 'refresh' | 'withLock' | 'nextPipelineId'>
{
  protected abstract now(): Date;
  protected abstract readonly leaseMs: number;
  /** How the backend replaces secret values before it stores a task: sizes are measured on what is stored. */
  protected abstract readonly redact: (text: string) => string;
  /**
   * `follow`: the task that follows this change, which a backend may post in the change's own write
   * (PostgreSQL's one statement); what it posted so comes back as `posted`.
   */
  protected abstract mutate(id: number, change: (task: Task) => Task | Refusal, retries?: number, follow?: FollowUpOf): Promise<MutationResult & { posted?: Posted }>;
  abstract createAfter(input: CreateTaskInput, after: PostAfter): Promise<PostResult>;
  abstract list(): Awaitable<Task[]>;
  abstract get(id: number): Awaitable<Task>;

  /**
   * Every task as stored now, for what must not miss one (handing a dead owner's tasks back): list(),
   * unless the backend's reads can lag behind a writer that died mid-write.
   */
  protected listAll(): Awaitable<Task[]> {
    return this.list();
  }

  /** Where this board's changes are told (the board's EventSink), or nowhere. */
  private sink: EventSink | null = null;
  private readonly unwritten = new UnwrittenUsage();

  /** Tells every change made through this board to `sink` from now on (null: to no one). */
  emitTo(sink: EventSink | null): void {
    this.sink = sink;
  }

  /** One change, as an event, when someone listens. */
  protected told(input: EventInput): void {
    this.sink?.emit(input);
  }

  /**
   * A task about to be posted, told and in the log before the write that makes it claimable, so no
   * claim of it is logged before its post (a write that then fails leaves a post of a task that never
   * came: rarer, and less misleading than a claim before its post).
   */
  protected async announce(task: Task, by: string): Promise<void> {
    this.posted(task, by);
    await this.sink?.flush();
  }

  /**
   * A task posted, told after the fact: PostgreSQL's way (a flush inside the create's transaction would
   * wait on its own pool). Written at once, not after the sink's batching: a claim of it, told by
   * another process, must find it in the log first.
   */
  protected posted(task: Task, by: string): void {
    this.told({ type: 'task_posted', pipeline: task.pipeline, task: task.id, agent: by, subject: task.subject, stage: task.stage, revision: task.revision, by, ...(task.role ? { role: task.role } : {}) });
    void this.sink?.flush();
  }

  /** A claim this board made; `takeover` when the task was in progress under an expired lease. */
  protected claimedBy(task: Task, takeover: boolean, role?: string): void {
    const as = role ?? task.role;
    this.told({ type: 'task_claimed', pipeline: task.pipeline, task: task.id, agent: task.owner, token: task.claims, takeover, ...(as ? { role: as } : {}) });
  }

  /**
   * `next` as a backend may store it: within MAX_TASK_WRITE_BYTES, trimmed when it must be (see
   * fitTask), or a Refusal saying why — never a task too large to read back. Every write calls it.
   */
  protected sized(next: Task): Task | Refusal {
    const fitted = fitTask(next, MAX_TASK_WRITE_BYTES, (task) => taskBytes(task, this.redact), (detail) => this.entry('runtime', 'trimmed', detail));
    return 'refused' in fitted ? new Refusal(fitted.refused) : fitted.task;
  }

  /**
   * A task about to be created: one posted (by the person, the lead) is refused over
   * MAX_POSTED_TASK_BYTES, leaving room for what autoteam adds as it is worked; one the runtime posts
   * from a finished stage (`trimToFit`) is trimmed like any write.
   */
  protected sizedNew(task: Task, input: CreateTaskInput): Task {
    if (input.trimToFit) {
      const fitted = this.sized(task);
      if (fitted instanceof Refusal) throw new TaskTooLargeError(fitted.reason);
      return fitted;
    }
    const bytes = taskBytes(task, this.redact);
    if (bytes <= MAX_POSTED_TASK_BYTES) return task;
    const subject = task.subject.length > 60 ? `${task.subject.slice(0, 59)}…` : task.subject;
    throw new TaskTooLargeError(
      `task '${subject}' would be ${formatBytes(bytes)}, over the ${formatLimit(MAX_POSTED_TASK_BYTES)} a posted task may be (task files are read up to 5 MB; the rest is room for autoteam's own updates)`,
    );
  }

  /** The task as `owner` claims it: a new token, a lease, and who it was taken from. */
  protected claimed(task: Task, owner: string): Task {
    const token = task.claims + 1;
    const until = new Date(this.now().getTime() + this.leaseMs).toISOString();
    const takeover = task.status === 'in_progress' && task.owner !== null;
    return {
      ...task,
      status: 'in_progress',
      owner,
      claims: token,
      lease: { owner, token, until },
      history: [...task.history, this.entry(owner, 'claimed', takeover ? `lease of ${task.owner} expired; taken over (token ${token})` : `token ${token}`)],
    };
  }

  async complete(id: number, fence: Fence | string, result?: string, artifacts?: Artifacts, next?: number): Promise<MutationResult> {
    const f = toFence(fence);
    const outcome = await this.finish(id, f, 'completed', result ?? null, artifacts, 'completed');
    if (outcome.ok) await this.completedBy(outcome.task, f.owner, next);
    return outcome;
  }

  async completeThenPost(id: number, fence: Fence, result: string, artifacts: Artifacts, next: { follow: FollowUpOf; completed?: (done: Task) => void }): Promise<CompletionResult> {
    const outcome = await this.finish(id, fence, 'completed', result, artifacts, 'completed', next.follow);
    if (!outcome.ok) return { ...outcome, posted: null };
    const { posted, ...done } = outcome;
    await this.completedBy(done.task, fence.owner);
    next.completed?.(done.task);
    if (posted?.created) this.posted(posted.task, posted.by);
    if (posted) return { ...done, posted: { task: posted.task, created: posted.created } };
    // Posted on its own: the backend writes it apart, or the one statement missed.
    const follow = await next.follow(done.task);
    return { ...done, posted: follow ? await this.createAfter(follow.input, follow.after) : null };
  }

  /** Task `done` was completed by `by`: told, and the tasks it blocked unblocked. */
  private async completedBy(done: Task, by: string, next?: number): Promise<void> {
    const signal = done.artifacts.signal;
    this.told({ type: 'task_completed', pipeline: done.pipeline, task: done.id, agent: by, result: done.result, token: done.claims, ...(signal ? { signal } : {}), ...(next ? { next } : {}) });
    await this.unblockDependents(done, by);
  }

  async fail(id: number, fence: Fence | string, reason: string, artifacts?: Artifacts): Promise<MutationResult> {
    const f = toFence(fence);
    const outcome = await this.finish(id, f, 'failed', reason, artifacts, 'failed');
    if (outcome.ok) this.told({ type: 'task_failed', pipeline: outcome.task.pipeline, task: id, agent: f.owner, reason, token: outcome.task.claims });
    return outcome;
  }

  /** Gives a claimed task back to the board (status pending, no owner); `kind` says why, for the event. */
  async release(id: number, fence: Fence | string, reason = 'released', kind: ReleaseKind = 'stopped'): Promise<MutationResult> {
    const f = toFence(fence);
    const outcome = await this.handBack(id, f, 'released', reason, () => ({}));
    if (outcome.ok) this.told({ type: 'task_released', pipeline: outcome.task.pipeline, task: id, agent: f.owner, kind, detail: reason, token: outcome.task.claims });
    return outcome;
  }

  /** Back to pending, no owner, no lease (fenced), with a history entry and any extra fields. */
  protected async handBack(id: number, fence: Fence, event: string, detail: string, extra: (task: Task) => Partial<Task>): Promise<MutationResult> {
    return this.mutateCarrying(id, (task) => {
      const refusal = fenceRefusal(task, fence);
      if (refusal) return refusal;
      return { ...task, status: 'pending', owner: null, lease: null, ...extra(task), history: [...task.history, this.entry(fence.owner, event, detail)] };
    });
  }

  /**
   * Releases an in-progress task whatever its claim (used when its owner is known dead).
   * Only acts if the task is still held by `owner`.
   */
  async reclaimFrom(id: number, owner: string, reason: string, by = 'runtime', token?: number, kind: ReleaseKind = 'owner_dead'): Promise<MutationResult> {
    const outcome = await this.mutate(id, (task) => {
      if (task.status !== 'in_progress' || task.owner !== owner) {
        return new Refusal(`task #${id} is not held by ${owner}`);
      }
      // A newer claim under the same name (a restarted teammate) is not the dead one's to give back.
      if (token !== undefined && task.claims !== token) return new Refusal(`task #${id} was claimed again since`);
      return {
        ...task,
        status: 'pending',
        owner: null,
        lease: null,
        history: [...task.history, this.entry(by, 'released', reason)],
      };
    });
    if (outcome.ok) this.told({ type: 'task_released', pipeline: outcome.task.pipeline, task: id, agent: owner, kind, detail: reason, token: outcome.task.claims });
    return outcome;
  }

  /** Hands back every in-progress task of `owner` (known dead or gone); returns the ids released. */
  async reclaimAllFrom(owner: string, reason: string, kind: ReleaseKind = 'owner_dead'): Promise<number[]> {
    const released: number[] = [];
    for (const task of await this.listAll()) {
      if (task.status !== 'in_progress' || task.owner !== owner) continue;
      const result = await this.reclaimFrom(task.id, owner, reason, 'runtime', task.claims, kind).catch(() => null);
      if (result?.ok) released.push(task.id);
    }
    return released;
  }

  /** Extends the lease of a claim still held by `fence`. */
  async renewLease(id: number, fence: Fence): Promise<MutationResult> {
    return this.mutateCarrying(id, (task) => {
      const refusal = fenceRefusal(task, fence);
      if (refusal) return refusal;
      const until = new Date(this.now().getTime() + this.leaseMs).toISOString();
      return { ...task, lease: { owner: fence.owner, token: task.claims, until } };
    });
  }

  /**
   * A failed attempt (a model or runtime error, not a verdict): the task goes back to pending but no
   * one may claim it before `retryAt`; the count is kept on the task. Fenced like every write.
   */
  async retryLater(id: number, fence: Fence, reason: string, retryAt: Date, kind: 'unfinished' | 'error' = 'error'): Promise<MutationResult> {
    const attempt = (await this.get(id)).attempts + 1;
    const detail = `attempt ${attempt} failed: ${reason}; not before ${retryAt.toISOString()}`;
    const notBefore = retryAt.toISOString();
    const outcome = await this.handBack(id, fence, 'retry_later', detail, (task) => ({ attempts: task.attempts + 1, notBefore }));
    if (outcome.ok) {
      const { task } = outcome;
      this.told({ type: 'task_released', pipeline: task.pipeline, task: id, agent: fence.owner, kind, detail: reason, token: task.claims, attempt: task.attempts, notBefore });
    }
    return outcome;
  }

  /**
   * Cancels an open task whoever holds it (the person's decision, not a teammate's): status
   * `cancelled`, lease gone, so the holder's next fenced write or renewal is refused.
   */
  async cancel(id: number, by: string, reason: string): Promise<MutationResult> {
    const outcome = await this.mutate(id, (task) => {
      if (task.status !== 'pending' && task.status !== 'in_progress') return new Refusal(`task #${id} is ${task.status}`);
      return { ...task, status: 'cancelled', lease: null, result: reason, history: [...task.history, this.entry(by, 'cancelled', reason)] };
    });
    if (outcome.ok) this.told({ type: 'task_cancelled', pipeline: outcome.task.pipeline, task: id, agent: by, by, reason });
    return outcome;
  }

  /** Notes one model call of task `id`: the task's next write through this board carries it (UnwrittenUsage). */
  recordUsage(id: number, delta: { inputTokens: number; outputTokens: number }): void {
    this.unwritten.add(id, delta);
  }

  /** What task `id` spent that this board has not written yet. */
  unwrittenUsage(id: number): TaskUsage {
    return this.unwritten.of(id);
  }

  /**
   * Writes the calls noted for task `id` and not yet carried, whoever holds it now: usage is what was
   * spent, not a claim (a claim that ended without a write of its own, a lease lost, a cancel).
   */
  async flushUsage(id: number): Promise<void> {
    if (this.unwritten.of(id).calls === 0) return;
    await this.mutateCarrying(id, (task) => task).finally(() => this.unwritten.drop(id));
  }

  /**
   * `mutate`, the write carrying the calls noted for the task since its last one (recordUsage). They
   * are taken when the change is made, so a write racing this one cannot carry them twice, and given
   * back when this write does not land.
   */
  protected async mutateCarrying(id: number, change: (task: Task) => Task | Refusal, follow?: FollowUpOf): Promise<MutationResult & { posted?: Posted }> {
    let carried: TaskUsage | null = null;
    const giveBack = () => {
      if (carried) this.unwritten.giveBack(id, carried);
      carried = null;
    };
    try {
      const result = await this.mutate(
        id,
        (task) => {
          giveBack(); // a change made again (a retried transaction) carries afresh
          const next = change(task);
          if (next instanceof Refusal) return next;
          carried = this.unwritten.take(id);
          return carried ? { ...next, usage: addTaskUsage(next.usage, carried) } : next;
        },
        undefined,
        follow,
      );
      if (!result.ok) giveBack();
      return result;
    } catch (error) {
      giveBack();
      throw error;
    }
  }

  /** Changes fields and/or records a history event. With a fence, refused unless the claim is current. */
  async update(id: number, patch: TaskPatch, options: UpdateOptions = {}): Promise<MutationResult> {
    return this.mutateCarrying(id, (task) => {
      if (options.fence) {
        const refusal = fenceRefusal(task, options.fence);
        if (refusal) return refusal;
      }
      const { artifacts, ...fields } = patch;
      const history = options.event
        ? [...task.history, this.entry(options.by ?? options.fence?.owner ?? 'lead', options.event, options.detail)]
        : task.history;
      return {
        ...task,
        ...fields,
        artifacts: artifacts ? { ...task.artifacts, ...(typeof artifacts === 'function' ? artifacts(task.artifacts) : artifacts) } : task.artifacts,
        history,
      };
    });
  }

  protected async finish(
    id: number,
    fence: Fence,
    status: TaskStatus,
    result: string | null,
    artifacts: Artifacts | undefined,
    event: string,
    follow?: FollowUpOf,
  ): Promise<MutationResult & { posted?: Posted }> {
    return this.mutateCarrying(id, (task) => {
      const refusal = fenceRefusal(task, fence);
      if (refusal) return refusal;
      return {
        ...task,
        status,
        lease: null,
        result,
        artifacts: artifacts ? { ...task.artifacts, ...artifacts } : task.artifacts,
        history: [...task.history, this.entry(fence.owner, event, result ?? undefined)],
      };
    }, follow);
  }

  private async unblockDependents(done: Task, by: string): Promise<void> {
    const dependents = new Set(done.blocks);
    for (const task of await this.list()) if (task.blockedBy.includes(done.id)) dependents.add(task.id);
    for (const id of dependents) {
      await this.mutate(id, (task) =>
        task.blockedBy.includes(done.id)
          ? {
              ...task,
              blockedBy: task.blockedBy.filter((blocker) => blocker !== done.id),
              history: [...task.history, this.entry(by, 'unblocked', `#${done.id} completed`)],
            }
          : new Refusal('not blocked'),
      ).catch(() => undefined);
    }
  }

  protected entry(by: string, event: string, detail?: string): HistoryEntry {
    return detail === undefined
      ? { at: this.now().toISOString(), by, event }
      : { at: this.now().toISOString(), by, event, detail };
  }
}

export function toFence(fence: Fence | string): Fence {
  return typeof fence === 'string' ? { owner: fence } : fence;
}

export type { CreateTaskInput };

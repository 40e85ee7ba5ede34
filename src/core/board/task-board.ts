import fs from 'node:fs';
import path from 'node:path';
import { NotFoundError } from '../errors.js';
import { redact, secretValues } from '../trace/redact.js';
import { writeJsonAtomic } from './atomic-io.js';
import { readTaskFile } from './task-file.js';
import { takeNext } from './counter.js';
import { DEFAULT_LOCK_STALE_MS, isLockBusy, withLock } from './lock.js';
import { type BoardProblem, TASK_FILE, TaskIndex } from './task-index.js';

import { type Artifacts, ArtifactsSchema } from './artifacts.js';
import { type HistoryEntry, type Task, TaskSchema, type TaskStatus } from './schemas.js';
import type { ClaimResult, CreateTaskInput, Fence, MutationResult, TaskBoardOptions, TaskPatch, UpdateOptions } from './task-types.js';

export type { BoardProblem } from './task-index.js';
export type * from './task-types.js';


const DEFAULT_LEASE_MS = 30_000;


class Refusal {
  constructor(
    readonly reason: string,
    readonly fenced = false,
  ) {}
}

/**
 * The board: one JSON file per task in `<root>/.tasks`. Reads are synchronous against an index that
 * re-reads only files whose inode, size or mtime changed (every write renames a new inode in).
 * Writes are read-check-write under a per-file lock, shared safely across threads and processes.
 */
export class TaskBoard {
  readonly rootDir: string;
  readonly dir: string;
  private readonly now: () => Date;
  private readonly leaseMs: number;
  private readonly lockStaleMs: number;
  private readonly index: TaskIndex;
  private candidates: { role: string | undefined; ids: number[] } | null = null;
  /** Secret-looking environment values never reach a task file, whatever a tool or model put in it. */
  private readonly redact: (text: string) => string;

  constructor(rootDir: string, options: TaskBoardOptions = {}) {
    this.rootDir = path.resolve(rootDir);
    this.dir = path.join(this.rootDir, '.tasks');
    this.now = options.now ?? (() => new Date());
    this.leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.lockStaleMs = options.lockStaleMs ?? DEFAULT_LOCK_STALE_MS;
    this.index = new TaskIndex(this.dir, options.onProblem);
    const secrets = secretValues();
    this.redact = (text) => redact(text, secrets);
    fs.mkdirSync(this.dir, { recursive: true });
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
    return readTaskFile(file);
  }

  /** Tasks that `owner` with `role` could claim now: pending and unblocked, or with an expired lease. */
  scanUnclaimed(role?: string): Task[] {
    const tasks = this.list();
    const byId = new Map(tasks.map((task) => [task.id, task]));
    const nowMs = this.now().getTime();
    return tasks.filter((task) => this.whyNotClaimable(task, role, nowMs, (id) => byId.get(id)) === null);
  }

  async create(input: CreateTaskInput): Promise<Task> {
    const blockedBy = [...new Set(input.blockedBy ?? [])];
    for (const blocker of blockedBy) {
      if (!fs.existsSync(this.taskPath(blocker))) {
        throw new NotFoundError(`blockedBy: task #${blocker} does not exist`);
      }
    }
    const by = input.by ?? 'lead';
    // Validated before an id is taken, so bad input never leaves a gap in the ids.
    const artifacts = ArtifactsSchema.parse(input.artifacts ?? {});
    const task = await withLock(
      path.join(this.dir, 'ids'),
      () => {
        const id = takeNext(
          path.join(this.dir, '.next-id'),
          (n) => fs.existsSync(this.taskPath(n)),
          () => Math.max(0, ...fs.readdirSync(this.dir).map((name) => Number(TASK_FILE.exec(name)?.[1] ?? 0))) + 1,
        );
        const at = this.now().toISOString();
        const created: Task = TaskSchema.parse({
          id,
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
          history: [{ at, by, event: 'created', detail: input.subject }],
          createdAt: at,
          updatedAt: at,
        });
        writeJsonAtomic(this.taskPath(id), created, this.redact);
        return created;
      },
      { staleMs: this.lockStaleMs },
    );
    for (const blocker of blockedBy) {
      await this.mutate(blocker, (current) => ({
        ...current,
        blocks: [...new Set([...current.blocks, task.id])],
      }));
    }
    return task;
  }

  /** Claims task `id` for `owner`: lock, read, check, write, unlock. Never claims twice. */
  async claim(id: number, owner: string, options: { role?: string; tryOnce?: boolean } = {}): Promise<ClaimResult> {
    try {
      return await this.mutate(
        id,
        (task) => {
          const reason = this.whyNotClaimable(task, options.role, this.now().getTime(), (blocker) =>
            this.readOrUndefined(blocker),
          );
          if (reason) return new Refusal(reason);
          const token = task.claims + 1;
          const until = new Date(this.now().getTime() + this.leaseMs).toISOString();
          const takeover = task.status === 'in_progress' && task.owner !== null;
          return {
            ...task,
            status: 'in_progress',
            owner,
            claims: token,
            lease: { owner, token, until },
            history: [
              ...task.history,
              this.entry(
                owner,
                'claimed',
                takeover ? `lease of ${task.owner} expired; taken over (token ${token})` : `token ${token}`,
              ),
            ],
          };
        },
        options.tryOnce ? 0 : undefined,
      );
    } catch (error) {
      if (isLockBusy(error)) return { ok: false, reason: `task #${id} is locked by another claimer` };
      throw error;
    }
  }

  /**
   * Claims the first claimable task for `role`. Candidates from one scan are kept and tried in turn
   * (a claim re-validates under the lock, so a stale candidate is only a wasted try), each checked
   * first with a stat so tasks taken by others are skipped without locking. The order starts at a
   * random point so concurrent claimers spread over different files instead of queueing on one lock.
   */
  async claimNext(owner: string, role?: string): Promise<ClaimResult | null> {
    for (let round = 0; round < 3; round++) {
      const cached = this.candidates && this.candidates.role === role ? this.candidates.ids : [];
      if (cached.length === 0) {
        const ids = this.scanUnclaimed(role).map((task) => task.id);
        if (ids.length === 0) return null;
        const start = Math.floor(Math.random() * ids.length);
        this.candidates = { role, ids: [...ids.slice(start), ...ids.slice(0, start)] };
      }
      const queue = this.candidates!.ids;
      while (queue.length > 0) {
        const id = queue.shift()!;
        // A file rewritten since the scan was almost surely claimed by someone else: skip it
        // without reading it. Skipping is always safe; the next scan sees it again if it is free.
        if (this.index.changedSinceScan(id)) continue;
        const result = await this.claim(id, owner, { role, tryOnce: true });
        if (result.ok) return result;
      }
    }
    return null;
  }

  async complete(id: number, fence: Fence | string, result?: string, artifacts?: Artifacts): Promise<MutationResult> {
    const f = toFence(fence);
    const outcome = await this.finish(id, f, 'completed', result ?? null, artifacts, 'completed');
    if (outcome.ok) await this.unblockDependents(outcome.task, f.owner);
    return outcome;
  }

  async fail(id: number, fence: Fence | string, reason: string, artifacts?: Artifacts): Promise<MutationResult> {
    return this.finish(id, toFence(fence), 'failed', reason, artifacts, 'failed');
  }

  /** Gives a claimed task back to the board (status pending, no owner). */
  async release(id: number, fence: Fence | string, reason = 'released'): Promise<MutationResult> {
    return this.handBack(id, toFence(fence), 'released', reason, () => ({}));
  }

  /** Back to pending, no owner, no lease (fenced), with a history entry and any extra fields. */
  private async handBack(id: number, fence: Fence, event: string, detail: string, extra: (task: Task) => Partial<Task>): Promise<MutationResult> {
    return this.mutate(id, (task) => {
      const refusal = this.checkFence(task, fence);
      if (refusal) return refusal;
      return { ...task, status: 'pending', owner: null, lease: null, ...extra(task), history: [...task.history, this.entry(fence.owner, event, detail)] };
    });
  }

  /**
   * Releases an in-progress task whatever its claim (used when its owner is known dead).
   * Only acts if the task is still held by `owner`.
   */
  async reclaimFrom(id: number, owner: string, reason: string, by = 'runtime', token?: number): Promise<MutationResult> {
    return this.mutate(id, (task) => {
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
  }

  /** Hands back every in-progress task of `owner` (known dead or gone); returns the ids released. */
  async reclaimAllFrom(owner: string, reason: string): Promise<number[]> {
    const released: number[] = [];
    for (const task of this.list()) {
      if (task.status !== 'in_progress' || task.owner !== owner) continue;
      const result = await this.reclaimFrom(task.id, owner, reason, 'runtime', task.claims).catch(() => null);
      if (result?.ok) released.push(task.id);
    }
    return released;
  }

  /** Extends the lease of a claim still held by `fence`. */
  async renewLease(id: number, fence: Fence): Promise<MutationResult> {
    return this.mutate(id, (task) => {
      const refusal = this.checkFence(task, fence);
      if (refusal) return refusal;
      const until = new Date(this.now().getTime() + this.leaseMs).toISOString();
      return { ...task, lease: { owner: fence.owner, token: task.claims, until } };
    });
  }

  /**
   * A failed attempt (a model or runtime error, not a verdict): the task goes back to pending but no
   * one may claim it before `retryAt`; the count is kept on the task. Fenced like every write.
   */
  async retryLater(id: number, fence: Fence, reason: string, retryAt: Date): Promise<MutationResult> {
    const attempt = this.get(id).attempts + 1;
    const detail = `attempt ${attempt} failed: ${reason}; not before ${retryAt.toISOString()}`;
    return this.handBack(id, fence, 'retry_later', detail, (task) => ({ attempts: task.attempts + 1, notBefore: retryAt.toISOString() }));
  }

  /**
   * Cancels an open task whoever holds it (the person's decision, not a teammate's): status
   * `cancelled`, lease gone, so the holder's next fenced write or renewal is refused.
   */
  async cancel(id: number, by: string, reason: string): Promise<MutationResult> {
    return this.mutate(id, (task) => {
      if (task.status !== 'pending' && task.status !== 'in_progress') return new Refusal(`task #${id} is ${task.status}`);
      return { ...task, status: 'cancelled', lease: null, result: reason, history: [...task.history, this.entry(by, 'cancelled', reason)] };
    });
  }

  /** Adds one model call's usage to the task (fenced; no history entry). */
  async recordUsage(id: number, fence: Fence, delta: { inputTokens: number; outputTokens: number }): Promise<MutationResult> {
    return this.mutate(id, (task) => {
      const refusal = this.checkFence(task, fence);
      if (refusal) return refusal;
      const usage = {
        calls: task.usage.calls + 1,
        inputTokens: task.usage.inputTokens + delta.inputTokens,
        outputTokens: task.usage.outputTokens + delta.outputTokens,
      };
      return { ...task, usage };
    });
  }

  /** Changes fields and/or records a history event. With a fence, refused unless the claim is current. */
  async update(id: number, patch: TaskPatch, options: UpdateOptions = {}): Promise<MutationResult> {
    return this.mutate(id, (task) => {
      if (options.fence) {
        const refusal = this.checkFence(task, options.fence);
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

  private async finish(
    id: number,
    fence: Fence,
    status: TaskStatus,
    result: string | null,
    artifacts: Artifacts | undefined,
    event: string,
  ): Promise<MutationResult> {
    return this.mutate(id, (task) => {
      const refusal = this.checkFence(task, fence);
      if (refusal) return refusal;
      return {
        ...task,
        status,
        lease: null,
        result,
        artifacts: artifacts ? { ...task.artifacts, ...artifacts } : task.artifacts,
        history: [...task.history, this.entry(fence.owner, event, result ?? undefined)],
      };
    });
  }

  private async unblockDependents(done: Task, by: string): Promise<void> {
    const dependents = new Set(done.blocks);
    for (const task of this.list()) if (task.blockedBy.includes(done.id)) dependents.add(task.id);
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

  private checkFence(task: Task, fence: Fence): Refusal | null {
    if (task.status !== 'in_progress') {
      return new Refusal(`task #${task.id} is ${task.status}, not in progress`, true);
    }
    if (task.owner !== fence.owner) {
      return new Refusal(`task #${task.id} is owned by ${task.owner ?? 'nobody'}, not ${fence.owner}`, true);
    }
    if (fence.token !== undefined && task.claims !== fence.token) {
      return new Refusal(
        `task #${task.id}: claim token ${fence.token} was superseded by token ${task.claims} (lease taken over)`,
        true,
      );
    }
    return null;
  }

  private whyNotClaimable(
    task: Task,
    role: string | undefined,
    nowMs: number,
    lookup: (id: number) => Task | undefined,
  ): string | null {
    if (role !== undefined && task.role !== null && task.role !== role) {
      return `task #${task.id} is for role ${task.role}, not ${role}`;
    }
    if (task.notBefore && Date.parse(task.notBefore) > nowMs) return `task #${task.id} is backing off until ${task.notBefore}`;
    if (task.status === 'in_progress') {
      // No lease (a hand edit, an old file) counts as expired: nothing would ever renew it.
      const until = task.lease ? Date.parse(task.lease.until) : Number.NaN;
      const expired = Number.isNaN(until) || until < nowMs;
      if (!expired) return `task #${task.id} is already claimed by ${task.owner}`;
    } else if (task.status !== 'pending') {
      return `task #${task.id} is ${task.status}`;
    } else if (task.owner !== null) {
      return `task #${task.id} is already owned by ${task.owner}`;
    }
    for (const blocker of task.blockedBy) {
      const other = lookup(blocker);
      if (other?.status !== 'completed') return `task #${task.id} is blocked by #${blocker}`;
    }
    return null;
  }

  /** Read-check-write of one task under its lock; a Refusal leaves the file untouched. */
  private async mutate(id: number, change: (task: Task) => Task | Refusal, retries?: number): Promise<MutationResult> {
    const file = this.taskPath(id);
    if (!fs.existsSync(file)) return { ok: false, reason: `task #${id} does not exist` };
    return withLock(
      file,
      () => {
        const current = readTaskFile(file);
        const next = change(current);
        if (next instanceof Refusal) return next.fenced ? { ok: false as const, reason: next.reason, fenced: true } : { ok: false as const, reason: next.reason };
        // Validated before it is written: a bad artifact is the caller's error, never an unreadable file.
        const written: Task = TaskSchema.parse({ ...next, updatedAt: this.now().toISOString() });
        writeJsonAtomic(file, written, this.redact);
        return { ok: true as const, task: written };
      },
      { staleMs: this.lockStaleMs, retries },
    );
  }

  private readOrUndefined(id: number): Task | undefined {
    try {
      return this.get(id);
    } catch {
      return undefined;
    }
  }

  private entry(by: string, event: string, detail?: string): HistoryEntry {
    return detail === undefined
      ? { at: this.now().toISOString(), by, event }
      : { at: this.now().toISOString(), by, event, detail };
  }
}

function toFence(fence: Fence | string): Fence {
  return typeof fence === 'string' ? { owner: fence } : fence;
}


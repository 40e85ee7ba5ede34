import fs from 'node:fs';
import path from 'node:path';
import { BoardFileError, NotFoundError } from '../errors.js';
import { redact, secretValues } from '../trace/redact.js';
import { readJsonFile, writeJsonAtomic } from './atomic-io.js';
import { DEFAULT_LOCK_STALE_MS, isLockBusy, withLock } from './lock.js';
import { type HistoryEntry, type Stage, type Task, TaskSchema, type TaskStatus } from './schemas.js';

export interface TaskBoardOptions {
  now?: () => Date;
  /** How long a claim stays valid without a renewal (default 30 s). */
  leaseMs?: number;
  lockStaleMs?: number;
  /** Called once per bad file version (parse or validation failure); the file is skipped. */
  onProblem?: (problem: BoardProblem) => void;
}

export interface BoardProblem {
  path: string;
  message: string;
}

export interface CreateTaskInput {
  subject: string;
  description?: string;
  role?: string | null;
  stage?: Stage | null;
  blockedBy?: number[];
  pipeline?: number | null;
  revision?: number;
  handoff?: string;
  artifacts?: Record<string, unknown>;
  /** Who posts it; recorded in history. */
  by?: string;
}

export type ClaimResult = { ok: true; task: Task } | { ok: false; reason: string };
export type MutationResult = ClaimResult;

/** Identifies the claim a write belongs to; a write from a superseded claim is refused. */
export interface Fence {
  owner: string;
  token?: number;
}

export interface TaskPatch {
  subject?: string;
  description?: string;
  status?: TaskStatus;
  role?: string | null;
  stage?: Stage | null;
  handoff?: string;
  result?: string | null;
  /** Merged into the task's artifacts key by key. */
  artifacts?: Record<string, unknown>;
}

export interface UpdateOptions {
  fence?: Fence;
  by?: string;
  event?: string;
  detail?: string;
}

const TASK_FILE = /^task_(\d+)\.json$/;
const DEFAULT_LEASE_MS = 30_000;

interface IndexEntry {
  key: string;
  task: Task | null;
}

class Refusal {
  constructor(readonly reason: string) {}
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
  private readonly onProblem?: (problem: BoardProblem) => void;
  private readonly index = new Map<number, IndexEntry>();
  private sorted: Task[] | null = null;
  private readonly problemList = new Map<string, BoardProblem>();
  private candidates: { role: string | undefined; ids: number[] } | null = null;
  /** Secret-looking environment values never reach a task file, whatever a tool or model put in it. */
  private readonly redact: (text: string) => string;

  constructor(rootDir: string, options: TaskBoardOptions = {}) {
    this.rootDir = path.resolve(rootDir);
    this.dir = path.join(this.rootDir, '.tasks');
    this.now = options.now ?? (() => new Date());
    this.leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.lockStaleMs = options.lockStaleMs ?? DEFAULT_LOCK_STALE_MS;
    this.onProblem = options.onProblem;
    const secrets = secretValues();
    this.redact = (text) => redact(text, secrets);
    fs.mkdirSync(this.dir, { recursive: true });
  }

  taskPath(id: number): string {
    return path.join(this.dir, `task_${id}.json`);
  }

  /** Every valid task, by id. Invalid files are skipped and listed by `problems()`. */
  list(): Task[] {
    this.refresh();
    if (!this.sorted) {
      this.sorted = [...this.index.values()]
        .map((entry) => entry.task)
        .filter((task): task is Task => task !== null)
        .sort((a, b) => a.id - b.id);
    }
    return this.sorted;
  }

  /** Files that failed to parse or validate at the last refresh. */
  problems(): BoardProblem[] {
    this.refresh();
    return [...this.problemList.values()];
  }

  /** Reads one task fresh from disk. Throws NotFoundError, or BoardFileError for a bad file. */
  get(id: number): Task {
    const file = this.taskPath(id);
    if (!fs.existsSync(file)) throw new NotFoundError(`task #${id} does not exist (${file})`);
    return readJsonFile(file, TaskSchema);
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
    const task = await withLock(
      path.join(this.dir, 'ids'),
      () => {
        const id = this.nextId();
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
          artifacts: input.artifacts ?? {},
          result: null,
          history: [{ at, by, event: 'created', detail: input.subject }],
          createdAt: at,
          updatedAt: at,
        });
        writeJsonAtomic(this.taskPath(id), created, this.redact);
        fs.writeFileSync(path.join(this.dir, '.next-id'), `${id + 1}\n`);
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
        if (this.changedSinceScan(id)) continue;
        const result = await this.claim(id, owner, { role, tryOnce: true });
        if (result.ok) return result;
      }
    }
    return null;
  }

  async complete(id: number, fence: Fence | string, result?: string, artifacts?: Record<string, unknown>): Promise<MutationResult> {
    const f = toFence(fence);
    const outcome = await this.finish(id, f, 'completed', result ?? null, artifacts, 'completed');
    if (outcome.ok) await this.unblockDependents(outcome.task, f.owner);
    return outcome;
  }

  async fail(id: number, fence: Fence | string, reason: string, artifacts?: Record<string, unknown>): Promise<MutationResult> {
    return this.finish(id, toFence(fence), 'failed', reason, artifacts, 'failed');
  }

  /** Gives a claimed task back to the board (status pending, no owner). */
  async release(id: number, fence: Fence | string, reason = 'released'): Promise<MutationResult> {
    const f = toFence(fence);
    return this.mutate(id, (task) => {
      const refusal = this.checkFence(task, f);
      if (refusal) return refusal;
      return {
        ...task,
        status: 'pending',
        owner: null,
        lease: null,
        history: [...task.history, this.entry(f.owner, 'released', reason)],
      };
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

  /** Extends the lease of a claim still held by `fence`. */
  async renewLease(id: number, fence: Fence): Promise<MutationResult> {
    return this.mutate(id, (task) => {
      const refusal = this.checkFence(task, fence);
      if (refusal) return refusal;
      const until = new Date(this.now().getTime() + this.leaseMs).toISOString();
      return { ...task, lease: { owner: fence.owner, token: task.claims, until } };
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
        artifacts: artifacts ? { ...task.artifacts, ...artifacts } : task.artifacts,
        history,
      };
    });
  }

  private async finish(
    id: number,
    fence: Fence,
    status: TaskStatus,
    result: string | null,
    artifacts: Record<string, unknown> | undefined,
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
    this.refresh();
    const dependents = new Set(done.blocks);
    for (const entry of this.index.values()) {
      if (entry.task?.blockedBy.includes(done.id)) dependents.add(entry.task.id);
    }
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
      return new Refusal(`task #${task.id} is ${task.status}, not in progress`);
    }
    if (task.owner !== fence.owner) {
      return new Refusal(`task #${task.id} is owned by ${task.owner ?? 'nobody'}, not ${fence.owner}`);
    }
    if (fence.token !== undefined && task.claims !== fence.token) {
      return new Refusal(
        `task #${task.id}: claim token ${fence.token} was superseded by token ${task.claims} (lease taken over)`,
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
        const current = readJsonFile(file, TaskSchema);
        const next = change(current);
        if (next instanceof Refusal) return { ok: false as const, reason: next.reason };
        const written: Task = { ...next, updatedAt: this.now().toISOString() };
        writeJsonAtomic(file, written, this.redact);
        return { ok: true as const, task: written };
      },
      { staleMs: this.lockStaleMs, retries },
    );
  }

  /** A temp file older than a minute was left by a writer that died between write and rename. */
  private removeIfOrphaned(file: string): void {
    const stat = fs.statSync(file, { throwIfNoEntry: false });
    if (stat && Date.now() - stat.mtimeMs > 60_000) fs.rmSync(file, { force: true });
  }

  private changedSinceScan(id: number): boolean {
    const stat = fs.statSync(this.taskPath(id), { throwIfNoEntry: false });
    return !stat || this.index.get(id)?.key !== `${stat.ino}:${stat.size}:${stat.mtimeMs}`;
  }

  private readOrUndefined(id: number): Task | undefined {
    try {
      return this.get(id);
    } catch {
      return undefined;
    }
  }

  /** Called under the ids lock. Trusts the counter unless its id is taken (a hand-made file). */
  private nextId(): number {
    let next = 0;
    try {
      next = Number.parseInt(fs.readFileSync(path.join(this.dir, '.next-id'), 'utf8'), 10) || 0;
    } catch {
      // No counter yet: the directory listing below decides.
    }
    if (next > 0 && !fs.existsSync(this.taskPath(next))) return next;
    next = Math.max(next, 1);
    for (const name of fs.readdirSync(this.dir)) {
      const match = TASK_FILE.exec(name);
      if (match) next = Math.max(next, Number(match[1]) + 1);
    }
    return next;
  }

  /** Brings the index up to date, re-reading only files whose identity changed. */
  private refresh(): void {
    let names: string[];
    try {
      names = fs.readdirSync(this.dir);
    } catch {
      names = [];
    }
    const seen = new Set<number>();
    let changed = false;
    for (const name of names) {
      const match = TASK_FILE.exec(name);
      if (!match) {
        if (name.endsWith('.tmp')) this.removeIfOrphaned(path.join(this.dir, name));
        continue;
      }
      const id = Number(match[1]);
      const file = path.join(this.dir, name);
      const stat = fs.statSync(file, { throwIfNoEntry: false });
      if (!stat) continue;
      seen.add(id);
      const key = `${stat.ino}:${stat.size}:${stat.mtimeMs}`;
      const cached = this.index.get(id);
      if (cached?.key === key) continue;
      changed = true;
      this.index.set(id, { key, task: this.load(file, id) });
    }
    for (const id of this.index.keys()) {
      if (!seen.has(id)) {
        this.index.delete(id);
        this.problemList.delete(this.taskPath(id));
        changed = true;
      }
    }
    if (changed) this.sorted = null;
  }

  private load(file: string, id: number): Task | null {
    try {
      const task = readJsonFile(file, TaskSchema);
      if (task.id !== id) throw new BoardFileError(file, `id: ${task.id} does not match the file name`);
      this.problemList.delete(file);
      return task;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      const problem = { path: file, message: (error as Error).message };
      this.problemList.set(file, problem);
      this.onProblem?.(problem);
      return null;
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


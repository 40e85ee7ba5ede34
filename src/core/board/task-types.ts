import type { Artifacts } from './artifacts.js';
import type { Stage, Task, TaskStatus } from './schemas.js';
import type { BoardProblem } from './task-index.js';

export interface TaskBoardOptions {
  now?: () => Date;
  /** How long a claim stays valid without a renewal (default 30 s). */
  leaseMs?: number;
  lockStaleMs?: number;
  /** How often a read sweeps every task file, for hand edits (which are not journaled). Default 2 s. */
  sweepMs?: number;
  /** Called once per bad file version (parse or validation failure); the file is skipped. */
  onProblem?: (problem: BoardProblem) => void;
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
  artifacts?: Artifacts;
  /** Who posts it; recorded in history. */
  by?: string;
  /**
   * The runtime posting what a finished stage recorded: trimmed to the size autoteam stores a task
   * up to, instead of refused over the limit for a posted task (see task-size.ts).
   */
  trimToFit?: boolean;
  /** Not claimable before this time (a task held while the person's TaskCreated hooks decide). */
  notBefore?: string;
}

/** Where `TaskStore.createAfter` posts: after task `task` of pipeline `pipeline`, once. */
export interface PostAfter {
  pipeline: number;
  task: number;
}

/** What `createAfter` posted, or found posted already (`created` false). */
export interface PostResult {
  task: Task;
  created: boolean;
}

/** The task that follows a completed one, posted as `TaskStore.createAfter` posts it. */
export interface FollowUp {
  input: CreateTaskInput;
  after: PostAfter;
}

/** What follows task `done` as it is completed (null: nothing); it only reads, and may be asked twice. */
export type FollowUpOf = (done: Task) => Promise<FollowUp | null>;

/** What a backend posted in a change's own write (TaskRules' `mutate` with `follow`), and who posted it. */
export interface Posted extends PostResult {
  by: string;
}

/** A completion and what it posted (null: nothing followed, or the completion did not land). */
export type CompletionResult = MutationResult & { posted: PostResult | null };

/** `fenced`: refused because the caller's claim is no longer current (taken over, finished, released). */
export type ClaimResult = { ok: true; task: Task } | { ok: false; reason: string; fenced?: boolean };
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
  /**
   * Merged into the task's artifacts key by key. A function gets the artifacts as they are under the
   * lock, so read-modify-write updates (append to a list) never race.
   */
  artifacts?: Artifacts | ((current: Artifacts) => Artifacts);
  /** `null` makes a held or backing-off task claimable now. */
  notBefore?: string | null;
}

export interface UpdateOptions {
  fence?: Fence;
  by?: string;
  event?: string;
  detail?: string;
}

import type { Artifacts, GitInfo, Issue, Submitted } from '../board/artifacts.js';
import type { Mailbox } from '../board/mailbox.js';
import type { Stage, Task, TaskUsage } from '../board/schemas.js';
import type { Fence, MutationResult } from '../board/task-types.js';
import type { TaskBoardLike } from '../board/task-rules.js';
import { mayFollow, unreadTasks } from '../board/task-index.js';
import { AutoteamError } from '../errors.js';
import { checkRequirement } from './requirement.js';
import type { Repository } from '../git/worktree.js';
import { approvalCommitMessage } from './approval-commit.js';
import type { PipelineEffects } from './effects.js';
import { handoffData } from './handoff-data.js';
import { retriedArtifacts, sentBackBy, transitionOf } from './pipeline-flow.js';
import { type NoticeOptions, PipelineNotices } from './pipeline-notices.js';
import { approvalOf, isFailed, isOpen, noPipeline, type PipelineStatus, pipelineStatus, pipelineStatuses, pipelineUsage } from './pipeline-status.js';
import { checkArtifacts, maxRevisionsGap, requirementAsCriterion, type StageDefinition } from './stage.js';
import { BUILTIN_REGISTRY, type StageRegistry } from './stage-registry.js';
import { followUpOf, postSuccessor, type SuccessorDeps, toldPosted } from './successor.js';
import { workspaceEffects } from './workspace-effects.js';
import { taskWorkspace } from './workspace.js';

export { taskWorkspace } from './workspace.js';

export interface PipelineState {
  id: number;
  status: PipelineStatus;
  tasks: Task[];
  reason?: string;
  revisions: number;
  /** Model calls and tokens over all of the pipeline's tasks. */
  usage: TaskUsage;
}

export interface AdvanceResult {
  /** False when the claim was lost (another owner took the task over): nothing was written. */
  ok: boolean;
  status: PipelineStatus;
  next: Task | null;
  reason?: string;
}

/**
 * Called once with how a step ended, before the lead is told (a pipeline approved or failed): the
 * teammate's own line about the step is then on its way to the lead before the lead's update is.
 */
export type BeforeNotify = (result: AdvanceResult) => void;

export interface PostOptions {
  by?: string;
  startStage?: Stage;
  /** Told the new pipeline's number once it is taken, before anything of the pipeline is written. */
  numbered?: (pipeline: number) => void;
}

/** How a signal tool ended a stage task: what to record on it, and its one-line result. */
export interface StageSignal {
  tool: string;
  artifacts: Artifacts;
  result: string;
}

export interface PipelineOptions extends NoticeOptions {
  maxRevisions?: number;
  /** The stages it moves work between (default: the built-in ones). */
  stages?: StageRegistry;
  /** What it does outside the board: worktrees, files, git (default: the real ones, workspace-effects.ts). */
  effects?: PipelineEffects;
}

/** Reads of a pipeline a cancel makes at most, each after a stage completed under it. */
const CANCEL_ROUNDS = 5;

/**
 * The pipeline state machine. The runtime, not the model, moves work between stages through the
 * board; what a stage needs is its definition's (the registry's), what touches files and git is the
 * effects', and what is told about it is the notices'.
 */
export class Pipeline {
  readonly stages: StageRegistry;
  private readonly effects: PipelineEffects;
  private readonly notices: PipelineNotices;
  private readonly successors: SuccessorDeps;

  constructor(
    private readonly board: TaskBoardLike,
    mailbox: Mailbox,
    private readonly options: PipelineOptions = {},
  ) {
    this.stages = options.stages ?? BUILTIN_REGISTRY;
    this.effects = options.effects ?? workspaceEffects(board.rootDir);
    this.notices = new PipelineNotices(board, mailbox, options);
    this.successors = { board, stages: this.stages, effects: this.effects, notices: this.notices };
  }

  /** The person's repository when pipelines get a worktree and branch on it (see useRepository). */
  private repository: Repository | null = null;

  /** Pipelines posted from now on get a worktree and branch on `repository` (null: `workspace/<n>`); the lead sets it once found. */
  useRepository(repository: Repository | null): void {
    this.repository = repository;
  }

  get maxRevisions(): number {
    return this.options.maxRevisions ?? 3;
  }

  workspaceOf(pipeline: number): string {
    const first = this.board.list().find((task) => task.pipeline === pipeline);
    return taskWorkspace(this.board.rootDir, first ?? { pipeline, artifacts: {} });
  }

  /**
   * Posts a requirement: a new pipeline whose first task is the first stage's (or `startStage`'s). A
   * pipeline that starts at a stage with no start of its own gets the requirement itself as its one
   * acceptance criterion, so an approval always rests on a criterion.
   */
  async post(requirement: string, options: PostOptions = {}): Promise<Task> {
    const text = checkRequirement(requirement);
    const definition = options.startStage ? this.stages.get(options.startStage) : this.stages.first;
    const pipeline = await this.board.nextPipelineId();
    options.numbered?.(pipeline);
    const artifacts: Artifacts = { requirement: text, requirements: {}, ...(definition.start ?? requirementAsCriterion)(text) };
    if (this.repository) artifacts.git = await this.effects.createWorkspace(this.repository, pipeline, text);
    const stage = definition.stage;
    const first = await this.board.create({
      subject: definition.subject(text, 0, artifacts),
      description: text,
      role: definition.role,
      stage,
      pipeline,
      handoff: definition.handoff(handoffData({ stage, revision: 0, description: text, artifacts }), undefined, artifacts),
      artifacts,
      by: options.by ?? 'lead',
      ...this.held(),
    });
    this.notices.status(first, options.by ?? 'lead', 'active');
    return this.created(first);
  }

  /**
   * Applies a stage signal: completes `task` with what the signal recorded and posts the next stage's
   * task. A signal that sends work back is first held to the stage's send-back rules (non-convergence,
   * max_revisions), which end the pipeline failed instead.
   */
  async advance(task: Task, fence: Fence, signal: StageSignal, before: BeforeNotify = () => undefined): Promise<AdvanceResult> {
    if (!task.stage || !task.pipeline) throw new AutoteamError(`task #${task.id} is not a stage task`, 'NOT_A_STAGE_TASK');
    const definition = this.stages.get(task.stage);
    const transition = definition.transitions[signal.tool];
    if (!transition) throw new AutoteamError(`${signal.tool} is not a signal of the ${task.stage} stage`, 'BAD_TRANSITION');
    checkArtifacts(definition, signal.tool, signal.artifacts);
    const settled = (result: AdvanceResult): AdvanceResult => (before(result), result);
    const current = this.board.get(task.id);
    const artifacts: Artifacts = { ...signal.artifacts, signal: signal.tool, ...(transition.next === 'approved' ? { final: true } : {}) };
    // Work sent back once too often (non-convergence, max_revisions) ends the pipeline failed instead.
    const previous = transition.revise ? sentBackBy(this.stages, this.board.list(), current.pipeline!, current.stage!, current.revision) : undefined;
    const stop = transition.revise ? (definition.sendBack ?? maxRevisionsGap)({ artifacts, task: current, maxRevisions: this.maxRevisions, ...(previous ? { previous } : {}) }) : null;
    let committed = '';
    const git = current.artifacts.git;
    if (!stop && transition.next === 'approved' && git) {
      const stillMine = current.status === 'in_progress' && current.owner === fence.owner && current.claims === fence.token;
      if (!stillMine) return settled({ ok: false, status: 'active', next: null, reason: `task #${task.id} is no longer yours` });
      let commit: string | null;
      try {
        // Authored `autoteam <reviewer@team>`: the role that approved it.
        commit = await this.effects.commit(git, approvalCommitMessage(current, artifacts), `${current.role}@${this.notices.team()}`);
      } catch (error) {
        return this.fail(current, fence, `approved, but the commit failed: ${(error as Error).message}`, before);
      }
      // Null: no change against the base (a requirement run again); the base is the approval, already in.
      const approved = commit ?? git.base;
      artifacts.git = { ...git, commit: approved, ...(git.remote ? { head: approved } : {}) };
      committed = commit ? ` — commit ${commit.slice(0, 12)} on ${git.branch}` : ` — nothing to commit: the base ${git.base.slice(0, 12)} already holds the reviewed files`;
    }
    const result = `${signal.result}${committed}`;
    if (!stop && transition.next !== 'approved') {
      // The next stage's task posted with the completion: one statement on PostgreSQL.
      const done = await this.board.completeThenPost(task.id, fence, result, artifacts, {
        follow: (completed) => followUpOf(this.successors, completed),
        completed: (completed) => this.notices.verdict(completed, fence.owner),
      });
      if (!done.ok) return settled({ ok: false, status: 'active', next: null, reason: done.reason });
      const next = done.posted ? await toldPosted(this.successors, done.task, done.posted) : null;
      return settled({ ok: true, status: 'active', next });
    }
    let done: MutationResult;
    if (stop) done = await this.board.fail(task.id, fence, stop, artifacts);
    else done = await this.board.complete(task.id, fence, result, artifacts);
    if (!done.ok) return settled({ ok: false, status: 'active', next: null, reason: done.reason });
    this.notices.verdict(done.task, fence.owner);
    const status = stop ? 'failed' : 'approved';
    this.notices.transition(current, null, status, fence.owner);
    const ended = settled({ ok: true, status, next: null, ...(stop ? { reason: stop } : {}) });
    const told = stop ? `Pipeline #${task.pipeline} failed: ${stop}` : `Pipeline #${task.pipeline} approved: ${signal.result}${committed}`;
    await this.notices.lead(fence.owner, current, status, told);
    return ended;
  }

  /**
   * Posts any successor a completed stage task should have but does not (run periodically by the
   * lead). Returns how many it posted.
   */
  async repair(): Promise<number> {
    let posted = 0;
    for (const done of this.handOversDue(this.board.list())) {
      const next = await postSuccessor(this.successors, done).catch(() => null);
      if (next) posted++;
    }
    return posted;
  }

  /** Completed stage tasks of active pipelines among `tasks` whose successor is due and not on the board. */
  private handOversDue(tasks: readonly Task[]): Task[] {
    const statuses = pipelineStatuses(tasks);
    // A task file that does not read (broken by hand) may be the successor: none is posted over it, or
    // a pipeline approved long ago would be worked again, its model calls spent anew.
    const unread = unreadTasks(this.board.problems());
    return tasks.filter(
      (done) =>
        done.status === 'completed' &&
        done.stage &&
        done.pipeline &&
        statuses.get(done.pipeline) === 'active' &&
        transitionOf(this.stages, done)?.next !== 'approved' &&
        !tasks.some((t) => t.pipeline === done.pipeline && t.artifacts.from === done.id) &&
        !unread.some((file) => mayFollow(file, done.pipeline!, done.id)),
    );
  }

  /**
   * A safety valve ended the task: fail it — a stage task fails its pipeline — and tell the lead,
   * for a general task too (nobody else would learn that it will not be done).
   */
  async fail(task: Task, fence: Fence, reason: string, before: BeforeNotify = () => undefined): Promise<AdvanceResult> {
    const failed = await this.board.fail(task.id, fence, reason);
    if (!failed.ok) {
      const lost: AdvanceResult = { ok: false, status: 'active', next: null, reason: failed.reason };
      before(lost);
      return lost;
    }
    const result: AdvanceResult = { ok: true, status: 'failed', next: null, reason };
    before(result);
    if (task.pipeline) {
      this.notices.transition(task, null, 'failed', fence.owner);
      await this.notices.lead(fence.owner, task, 'failed', `Pipeline #${task.pipeline} failed at ${task.stage ?? 'task'} #${task.id}: ${reason}`);
    } else {
      await this.notices.taskFailed(fence.owner, task, reason);
    }
    return result;
  }

  /**
   * Cancels every open task of a pipeline (owners are told; their in-flight work stops at its next
   * fenced write or lease renewal). Returns the ids cancelled.
   */
  async cancel(pipeline: number, by: string, why?: string): Promise<number[]> {
    const reason = `cancelled by ${by}${why ? `: ${why}` : ''}`;
    const cancelled: number[] = [];
    let first: Task | undefined;
    // A stage may complete between this read and the cancel of its task, and its successor be posted
    // after: each round reads again, until nothing of the pipeline is open and no hand-over is due.
    for (let round = 0; round < CANCEL_ROUNDS; round++) {
      await this.board.refresh();
      const tasks = this.board.list().filter((task) => task.pipeline === pipeline);
      if (tasks.length === 0) throw noPipeline(this.board, pipeline);
      first ??= tasks[0]!;
      const open = tasks.filter(isOpen);
      // Between two stages (the next one's task not posted yet, or its poster died): it is posted now,
      // once whoever comes first (postSuccessor), and cancelled, so the completer posts nothing more.
      for (const done of open.length === 0 ? this.handOversDue(tasks) : []) {
        const next = await postSuccessor(this.successors, done);
        if (next && isOpen(next)) open.push(next);
      }
      if (open.length === 0 && round > 0) break;
      // Nothing open at the first look: cancelled already (a second cancel, or one from another front
      // end first) is nothing to do, as a second merge or discard; approved or failed is refused.
      const status = open.length === 0 ? pipelineStatus(tasks) : null;
      if (status === 'cancelled') return [];
      if (status) throw new AutoteamError(`pipeline #${pipeline} has nothing open to cancel (it is ${status})`, 'USAGE');
      let missed = false;
      for (const task of open) {
        const result = await this.board.cancel(task.id, by, reason);
        if (!result.ok) {
          missed = true;
          continue;
        }
        cancelled.push(task.id);
        if (task.status === 'in_progress' && task.owner) await this.notices.stop(by, task);
      }
      if (!missed) break;
    }
    this.notices.cancelled(pipeline, cancelled[0] ?? 0, by);
    if (cancelled.length) await this.notices.ended(first!, by, 'cancelled', reason);
    return cancelled;
  }

  /**
   * Restarts a failed or cancelled pipeline from the stage that failed: a new task of that stage with
   * what the failed one was handed (the pipeline's data, and what its stage's definition keeps; its
   * own verdicts and reports dropped). The failed task stays on the board, marked `retriedBy`.
   */
  async retry(pipeline: number, by: string): Promise<Task> {
    await this.board.refresh();
    const tasks = this.board.list().filter((task) => task.pipeline === pipeline);
    if (tasks.length === 0) throw noPipeline(this.board, pipeline);
    const status = pipelineStatus(tasks);
    if (status !== 'failed' && status !== 'cancelled') {
      throw new AutoteamError(`pipeline #${pipeline} is ${status}; only a failed or cancelled pipeline can be retried`, 'USAGE');
    }
    // Its worktree and branch are gone: a retry would fail at once, on a worktree that is not there.
    if (tasks.some((task) => task.artifacts.outcome?.action === 'discarded')) throw new AutoteamError(`pipeline #${pipeline} was discarded: its branch and worktree are gone, so it cannot be retried (post its requirement again to work it anew)`, 'USAGE');
    const failed = tasks.filter((task) => isFailed(task) && task.artifacts.retriedBy === undefined);
    const from = failed.find((task) => task.status === 'failed') ?? failed[0]!;
    const next = await this.board.create({
      subject: from.subject,
      description: from.description,
      role: from.role,
      stage: from.stage,
      pipeline,
      revision: from.revision,
      handoff: from.handoff,
      artifacts: retriedArtifacts(from, from.stage ? this.stages.get(from.stage) : null),
      by,
      // What a task of this board already held: trimmed to fit like any runtime write, never refused.
      trimToFit: true,
      ...this.held(),
    });
    for (const task of failed) {
      await this.board.update(task.id, { artifacts: { retriedBy: next.id } }, { by, event: 'retried', detail: `retried as #${next.id}` });
    }
    this.notices.transition(from, next.id, from.stage ?? 'task', by);
    this.notices.events?.emit({ type: 'task_retried', pipeline, task: from.id, agent: by, newTask: next.id, by });
    this.notices.status(next, by, 'active');
    return this.created(next);
  }

  /**
   * Sends an approved pipeline back as a new revision with `issues` (the merge queue: a conflict, or a
   * check that fails on the rebased tree). The approving task's ending becomes its stage's revise
   * signal (what it had approved with is kept in `mergeSentBack`), so the pipeline's rules treat it
   * as a review's send-back: the next revision carries the issues and `submitted`, the next review
   * sees them as previous issues, `repair` posts a successor lost to a crash. Counted against
   * max_revisions as a review's send-back is; past it the pipeline fails instead.
   */
  async sendBackApproved(pipeline: number, back: { issues: Issue[]; reason: string; git?: GitInfo; submitted?: Submitted }, by: string): Promise<{ status: 'active'; next: Task | null } | { status: 'failed'; reason: string }> {
    await this.board.refresh();
    const tasks = this.board.list().filter((task) => task.pipeline === pipeline);
    const approval = approvalOf(tasks);
    const status = pipelineStatus(tasks);
    if (!approval?.stage || status !== 'approved') throw new AutoteamError(`pipeline #${pipeline} is ${status}: only an approved pipeline is sent back`, 'USAGE');
    const definition = this.stages.get(approval.stage);
    const revise = Object.entries(definition.transitions).find(([, transition]) => transition.revise);
    const record = { mergeSentBack: { signal: approval.artifacts.signal ?? 'approved', reason: back.reason, by, ...(approval.artifacts.git?.commit ? { commit: approval.artifacts.git.commit } : {}) } };
    const stop = revise ? maxRevisionsGap({ artifacts: approval.artifacts, task: approval, maxRevisions: this.maxRevisions }) : `the ${approval.stage} stage has no signal that sends work back`;
    if (stop) {
      const reason = `${back.reason}; ${stop}`;
      const failed = await this.board.update(approval.id, { status: 'failed', result: reason, artifacts: { ...record, final: false } }, { by, event: 'failed', detail: reason });
      if (failed.ok) {
        this.notices.transition(approval, null, 'failed', by);
        await this.notices.lead(by, failed.task, 'failed', `Pipeline #${pipeline} failed: ${reason}`);
      }
      return { status: 'failed', reason };
    }
    const artifacts: Artifacts = { ...record, signal: revise![0], final: false, issues: back.issues, ...(back.git ? { git: back.git } : {}), ...(back.submitted ? { submitted: back.submitted } : {}) };
    const updated = await this.board.update(approval.id, { artifacts }, { by, event: 'sent_back', detail: back.reason });
    if (!updated.ok) throw new AutoteamError(`pipeline #${pipeline} could not be sent back: ${updated.reason}`, 'BOARD_ERROR');
    this.notices.status(updated.task, by, 'active', back.reason);
    // Posted by whoever sent it back (the merge queue), not the reviewer who approved it.
    return { status: 'active', next: await postSuccessor(this.successors, updated.task, by) };
  }

  state(pipeline: number): PipelineState {
    const tasks = this.board.list().filter((task) => task.pipeline === pipeline);
    const failed = tasks.find(isFailed);
    const revisions = Math.max(0, ...tasks.map((task) => task.revision));
    const usage = pipelineUsage(tasks);
    if (failed) return { id: pipeline, status: pipelineStatus(tasks), tasks, reason: failed.result ?? failed.status, revisions, usage };
    return { id: pipeline, status: pipelineStatus(tasks), tasks, revisions, usage };
  }

  pipelines(): number[] {
    return [...new Set(this.board.list().flatMap((task) => (task.pipeline ? [task.pipeline] : [])))].sort((a, b) => a - b);
  }

  /** See PipelineNotices.held: what a task posts with while the person's TaskCreated hooks decide on it. */
  held(): { notBefore?: string } {
    return this.notices.held();
  }

  /** See PipelineNotices.created: a task just posted, put to the person's TaskCreated hooks. */
  created(task: Task): Promise<Task> {
    return this.notices.created(task);
  }
}

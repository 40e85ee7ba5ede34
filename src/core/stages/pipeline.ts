import type { EventSink } from '../events/emitter.js';
import type { HooksConfig } from '../hooks/config.js';
import { HookRunner } from '../hooks/runner.js';
import fs from 'node:fs';
import path from 'node:path';
import type { Artifacts, Criterion } from '../board/artifacts.js';
import type { Mailbox } from '../board/mailbox.js';
import type { Stage, Task, TaskUsage } from '../board/schemas.js';
import type { Fence } from '../board/task-board.js';
import type { TaskBoardLike } from '../board/task-rules.js';
import { AutoteamError } from '../errors.js';
import { resolveInWorkspace } from '../exec/sandbox-path.js';
import { branchName, commitWorktree, createWorktree, type Repository, worktreeChange } from '../git/worktree.js';
import type { Trace } from '../trace/trace.js';
import { roleForStage, stageOf, type Transition } from './definitions.js';
import { handoffData, renderHandoff } from './handoff.js';
import { manifestDiff } from './submission.js';
import { isFailed, type PipelineStatus, pipelineStatus, pipelineStatuses, pipelineUsage } from './pipeline-status.js';
import { repeatedBlocker } from './verdicts.js';


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
}

/** How a signal tool ended a stage task: what to record on it, and its one-line result. */
export interface StageSignal {
  tool: string;
  artifacts: Artifacts;
  result: string;
}

/** The largest requirement a pipeline takes; every stage's task carries it. */
export const MAX_REQUIREMENT_BYTES = 100 * 1024;
/** How much longer than its hooks may run a new task stays held for them (see `Pipeline.held`). */
const HOOK_HOLD_MARGIN_MS = 5_000;

/** The requirement, trimmed; refused when it is empty or over MAX_REQUIREMENT_BYTES. */
export function checkRequirement(requirement: string): string {
  const text = requirement.trim();
  if (!text) throw new AutoteamError('a requirement cannot be empty', 'INVALID_REQUIREMENT');
  const bytes = Buffer.byteLength(text);
  if (bytes > MAX_REQUIREMENT_BYTES) {
    throw new AutoteamError(
      `a requirement is at most ${MAX_REQUIREMENT_BYTES / 1024} KB (this one is ${Math.ceil(bytes / 1024)} KB): put the details in a file and refer to it`,
      'INVALID_REQUIREMENT',
    );
  }
  return text;
}

/** What every task of a pipeline carries forward, whatever the stage. */
const CARRIED = ['requirement', 'requirements', 'summary', 'qa', 'criteria', 'git', 'reports'] as const;

/** Where a task's files live: its pipeline's worktree on the person's repository, or `workspace/<pipeline>`. */
export function taskWorkspace(rootDir: string, task: Pick<Task, 'pipeline' | 'artifacts'> | null): string {
  if (task?.artifacts.git) return task.artifacts.git.worktree;
  return path.join(rootDir, 'workspace', task?.pipeline ? String(task.pipeline) : 'general');
}

export interface PipelineOptions {
  maxRevisions?: number;
  trace?: Trace;
  /** Where its events go (pipeline status, verdicts, retries): the thread's EventSink. */
  events?: EventSink;
  /** The person's hooks: TaskCreated for the tasks it posts, PipelineCompleted when one ends. */
  hooks?: HooksConfig;
}

/** The pipeline state machine. The runtime, not the model, moves work between stages through the board. */
export class Pipeline {
  private readonly hooks: HookRunner | null;

  constructor(
    private readonly board: TaskBoardLike,
    private readonly mailbox: Mailbox,
    private readonly options: PipelineOptions = {},
  ) {
    const { hooks, events } = options;
    this.hooks = hooks && events && Object.keys(hooks).length ? new HookRunner(hooks, { cwd: board.rootDir, emit: (event) => events.emit(event) }) : null;
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
   * Posts a requirement: a new pipeline whose first task is `requirements` (or `startStage`). A
   * pipeline that skips the analyst gets the requirement itself as its one acceptance criterion, so an
   * approval always rests on a criterion.
   */
  async post(requirement: string, options: PostOptions = {}): Promise<Task> {
    const text = checkRequirement(requirement);
    const pipeline = await this.allocateId();
    const stage = options.startStage ?? 'requirements';
    const criteria: Criterion[] =
      stage === 'requirements' ? [] : [{ id: 'AC1', criterion: `The program does what was asked: ${text}`, verify: 'run it on sample input and compare with the request' }];
    const artifacts: Artifacts = { requirement: text, requirements: {}, ...(criteria.length ? { criteria } : {}) };
    if (this.repository) {
      // Its own worktree and branch, from HEAD as it is now: parallel pipelines never share files.
      const worktree = path.join(this.board.rootDir, '.autoteam', 'worktrees', String(pipeline));
      const { branch, base } = await createWorktree(this.repository.top, worktree, branchName(pipeline, text));
      artifacts.git = { repo: this.repository.top, branch, base, worktree };
    }
    const first = await this.board.create({
      subject: stageOf(stage).subject(text, 0),
      description: text,
      role: roleForStage(stage),
      stage,
      pipeline,
      handoff: renderHandoff(handoffData({ stage, revision: 0, description: text, artifacts })),
      artifacts,
      by: options.by ?? 'lead',
      ...this.held(),
    });
    this.status(first, options.by ?? 'lead', 'active');
    return this.created(first);
  }

  /**
   * Applies a stage signal: completes `task` with what the signal recorded and posts the next stage's
   * task. A signal that sends work back is first held to the governance rules (non-convergence,
   * max_revisions), which end the pipeline failed instead.
   */
  async advance(task: Task, fence: Fence, signal: StageSignal, before: BeforeNotify = () => undefined): Promise<AdvanceResult> {
    if (!task.stage || !task.pipeline) throw new AutoteamError(`task #${task.id} is not a stage task`, 'NOT_A_STAGE_TASK');
    const transition = stageOf(task.stage).transitions[signal.tool];
    if (!transition) throw new AutoteamError(`${signal.tool} is not a signal of the ${task.stage} stage`, 'BAD_TRANSITION');
    const settled = (result: AdvanceResult): AdvanceResult => (before(result), result);
    const current = this.board.get(task.id);
    const artifacts: Artifacts = { ...signal.artifacts, signal: signal.tool, ...(transition.next === 'approved' ? { final: true } : {}) };

    if (transition.revise) {
      const stop = this.governance(current, artifacts);
      if (stop) {
        const failed = await this.board.fail(task.id, fence, stop, artifacts);
        if (!failed.ok) return settled({ ok: false, status: 'active', next: null, reason: failed.reason });
        this.verdict(failed.task, fence.owner);
        this.traceTransition(current, null, 'failed', fence.owner);
        const result = settled({ ok: true, status: 'failed', next: null, reason: stop });
        await this.notifyLead(fence.owner, current, 'failed', `Pipeline #${task.pipeline} failed: ${stop}`);
        return result;
      }
    }
    let committed = '';
    if (transition.next === 'approved' && current.artifacts.git) {
      const stillMine = current.status === 'in_progress' && current.owner === fence.owner && current.claims === fence.token;
      if (!stillMine) return settled({ ok: false, status: 'active', next: null, reason: `task #${task.id} is no longer yours` });
      let commit: string | null;
      try {
        commit = await this.commitApproval(current, artifacts);
      } catch (error) {
        return this.fail(current, fence, `approved, but the commit failed: ${(error as Error).message}`, before);
      }
      if (!commit) return this.fail(current, fence, `approved, but the worktree has no change against ${current.artifacts.git.base.slice(0, 12)}: nothing to commit`, before);
      artifacts.git = { ...current.artifacts.git, commit };
      committed = ` — commit ${commit.slice(0, 12)} on ${current.artifacts.git.branch}`;
    }
    const done = await this.board.complete(task.id, fence, `${signal.result}${committed}`, artifacts);
    if (!done.ok) return settled({ ok: false, status: 'active', next: null, reason: done.reason });
    this.verdict(done.task, fence.owner);
    if (transition.next === 'approved') {
      this.traceTransition(current, null, 'approved', fence.owner);
      const result = settled({ ok: true, status: 'approved', next: null });
      await this.notifyLead(fence.owner, current, 'approved', `Pipeline #${task.pipeline} approved: ${signal.result}${committed}`);
      return result;
    }
    return settled(await this.postSuccessor(done.task));
  }

  /**
   * Commits the approved worktree on its branch: the requirement as the subject, the criteria with
   * their verdicts and the review's comment in the body, authored `autoteam <reviewer@team>`.
   */
  private async commitApproval(review: Task, artifacts: Artifacts): Promise<string | null> {
    const git = review.artifacts.git!;
    const requirement = review.artifacts.requirement ?? review.description;
    const firstLine = requirement.split('\n')[0]!.trim();
    const subject = firstLine.length > 72 ? `${firstLine.slice(0, 71)}…` : firstLine;
    const verdicts = new Map((artifacts.criteriaVerdicts ?? []).map((v) => [v.id, v]));
    const body = [
      ...(requirement !== firstLine ? ['Requirement:', requirement, ''] : []),
      'Acceptance criteria:',
      ...(review.artifacts.criteria ?? []).map((c) => `- [${c.id}] ${c.criterion}${verdicts.get(c.id)?.met ? ` — met: ${verdicts.get(c.id)!.evidence}` : ''}`),
      '',
      `Review: ${artifacts.comment ?? 'approved'}`,
      '',
      `autoteam pipeline #${review.pipeline}, approved in task #${review.id} (revision ${review.revision})`,
    ];
    const team = this.mailbox.registry.read().team;
    return commitWorktree(git.worktree, git.base, `${subject}\n\n${body.join('\n')}\n`, `${review.role}@${team}`);
  }

  /** Why sending this work back must end the pipeline instead, or null. */
  private governance(review: Task, artifacts: Artifacts): string | null {
    const issues = artifacts.issues ?? [];
    const previous = this.previousReview(review.pipeline!, review.revision);
    const repeated = previous ? repeatedBlocker(previous.artifacts.issues ?? [], issues) : null;
    if (repeated) return `not converging: ${repeated.text}`;
    if (review.revision + 1 > this.maxRevisions) {
      return `max_revisions (${this.maxRevisions}) reached; the reviewer still found ${issues.length} issue(s)`;
    }
    return null;
  }

  /** The review of `pipeline` at `revision - 1` that sent the work back, if any. */
  private previousReview(pipeline: number, revision: number): Task | undefined {
    if (revision < 1) return undefined;
    return this.board
      .list()
      .find((t) => t.pipeline === pipeline && t.stage === 'review' && t.revision === revision - 1 && t.artifacts.verdict === 'changes requested');
  }

  /**
   * Posts the task that follows a completed stage task, built only from what that task recorded on
   * the board. Idempotent, so `repair` can call it for a completion whose successor was never posted
   * (the process died, or the create failed, between the two writes).
   */
  private async postSuccessor(done: Task): Promise<AdvanceResult> {
    const transition = transitionOf(done);
    if (!transition || transition.next === 'approved') return { ok: true, status: 'active', next: null };
    const stage = transition.next;
    const revision = transition.revise ? done.revision + 1 : done.revision;
    const artifacts: Artifacts = { from: done.id };
    for (const key of [...CARRIED, ...(transition.carry ?? [])]) {
      if (done.artifacts[key] !== undefined) Object.assign(artifacts, { [key]: done.artifacts[key] });
    }
    let content: string | undefined;
    const submitted = artifacts.submitted;
    if (stage === 'review' && submitted) {
      content = fs.readFileSync(resolveInWorkspace(taskWorkspace(this.board.rootDir, done), submitted.file), 'utf8');
      if (artifacts.git) artifacts.change = await worktreeChange(artifacts.git.worktree, artifacts.git.base);
      const previous = this.previousReview(done.pipeline!, revision);
      if (previous) {
        artifacts.previousIssues = previous.artifacts.issues ?? [];
        artifacts.diff = manifestDiff(this.board.rootDir, previous.artifacts.submitted?.files ?? {}, submitted.files ?? {});
      }
    }
    const requirement = done.artifacts.requirement ?? done.description;
    const handoff = renderHandoff(handoffData({ stage, revision, description: requirement, artifacts }), content);
    return this.postNext(done, stage, revision, stageOf(stage).subject(requirement, revision, submitted?.file), handoff, artifacts);
  }

  /**
   * Posts any successor a completed stage task should have but does not (run periodically by the
   * lead). Returns how many it posted.
   */
  async repair(): Promise<number> {
    const tasks = this.board.list();
    const statuses = pipelineStatuses(tasks);
    let posted = 0;
    for (const done of tasks) {
      if (done.status !== 'completed' || !done.stage || !done.pipeline || statuses.get(done.pipeline) !== 'active') continue;
      if (transitionOf(done)?.next === 'approved') continue;
      if (tasks.some((t) => t.pipeline === done.pipeline && t.artifacts.from === done.id)) continue;
      const result = await this.postSuccessor(done).catch(() => null);
      if (result?.next) posted++;
    }
    return posted;
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
      this.traceTransition(task, null, 'failed', fence.owner);
      await this.notifyLead(fence.owner, task, 'failed', `Pipeline #${task.pipeline} failed at ${task.stage ?? 'task'} #${task.id}: ${reason}`);
    } else {
      const lead = this.mailbox.registry.read().lead;
      await this.mailbox.send(fence.owner, lead, `Task #${task.id} failed: ${reason}`, 'message', { task: task.id }).catch(() => undefined);
    }
    return result;
  }

  /**
   * Cancels every open task of a pipeline (owners are told; their in-flight work stops at its next
   * fenced write or lease renewal). Returns the ids cancelled.
   */
  async cancel(pipeline: number, by: string, why?: string): Promise<number[]> {
    await this.board.refresh();
    const tasks = this.board.list().filter((task) => task.pipeline === pipeline);
    if (tasks.length === 0) throw new AutoteamError(`there is no pipeline #${pipeline}`, 'NOT_FOUND');
    const open = tasks.filter((task) => task.status === 'pending' || task.status === 'in_progress');
    if (open.length === 0) throw new AutoteamError(`pipeline #${pipeline} has nothing open to cancel (it is ${pipelineStatus(tasks)})`, 'USAGE');
    const cancelled: number[] = [];
    for (const task of open) {
      const result = await this.board.cancel(task.id, by, `cancelled by ${by}${why ? `: ${why}` : ''}`);
      if (!result.ok) continue;
      cancelled.push(task.id);
      if (task.status === 'in_progress' && task.owner) {
        await this.mailbox.send(by, task.owner, `Task #${task.id} was cancelled by ${by}: stop working on it.`, 'message', { task: task.id }).catch(() => undefined);
      }
    }
    this.options.trace?.write({ kind: 'transition', pipeline, from: cancelled[0] ?? 0, to: null, stage: 'pipeline', next: 'cancelled', by });
    if (cancelled.length) await this.ended(tasks[0]!, by, 'cancelled', why ? `cancelled by ${by}: ${why}` : `cancelled by ${by}`);
    return cancelled;
  }

  /**
   * Restarts a failed or cancelled pipeline from the stage that failed: a new task of that stage with
   * what the failed one was handed (its requirements, Q&A and criteria kept, its own verdicts and
   * reports dropped). The failed task stays on the board, marked `retriedBy`.
   */
  async retry(pipeline: number, by: string): Promise<Task> {
    await this.board.refresh();
    const tasks = this.board.list().filter((task) => task.pipeline === pipeline);
    if (tasks.length === 0) throw new AutoteamError(`there is no pipeline #${pipeline}`, 'NOT_FOUND');
    const status = pipelineStatus(tasks);
    if (status !== 'failed' && status !== 'cancelled') {
      throw new AutoteamError(`pipeline #${pipeline} is ${status}; only a failed or cancelled pipeline can be retried`, 'USAGE');
    }
    const failed = tasks.filter((task) => isFailed(task) && task.artifacts.retriedBy === undefined);
    const from = failed.find((task) => task.status === 'failed') ?? failed[0]!;
    const { lint: _l, tests: _t, complexity: _c, checks: _k, verdict: _v, comment: _m, issues: _i, criteriaVerdicts: _cv, signal: _s, retriedBy: _r, ...kept } =
      from.artifacts;
    const next = await this.board.create({
      subject: from.subject,
      description: from.description,
      role: from.role,
      stage: from.stage,
      pipeline,
      revision: from.revision,
      handoff: from.handoff,
      artifacts: { ...kept, ...(from.stage === 'implementation' && from.artifacts.issues ? { issues: from.artifacts.issues } : {}), retryOf: from.id },
      by,
      // What a task of this board already held: trimmed to fit like any runtime write, never refused.
      trimToFit: true,
      ...this.held(),
    });
    for (const task of failed) {
      await this.board.update(task.id, { artifacts: { retriedBy: next.id } }, { by, event: 'retried', detail: `retried as #${next.id}` });
    }
    this.traceTransition(from, next.id, from.stage ?? 'task', by);
    this.options.events?.emit({ type: 'task_retried', pipeline, task: from.id, agent: by, newTask: next.id, by });
    this.status(next, by, 'active');
    return this.created(next);
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

  private async postNext(from: Task, stage: Stage, revision: number, subject: string, handoff: string, artifacts: Artifacts): Promise<AdvanceResult> {
    const requirement = from.artifacts.requirement ?? from.description;
    // Check-then-create under the pipeline's lock: a successor is posted once, whoever gets there first.
    return this.board.withLock(`pipeline-${from.pipeline}`, async () => {
      // Fresh under the lock: a successor another process just posted must be seen.
      await this.board.refresh();
      const existing = this.board.list().find((task) => task.pipeline === from.pipeline && task.artifacts.from === from.id);
      if (existing) return { ok: true, status: 'active' as const, next: existing };
      const next = await this.board.create({
        subject,
        // The requirement itself is in the artifacts and the handoff: the description is a pointer.
        description: requirement.length > 300 ? `${requirement.slice(0, 299)}…` : requirement,
        role: roleForStage(stage),
        stage,
        pipeline: from.pipeline,
        revision,
        handoff,
        artifacts,
        by: from.owner ?? 'runtime',
        // Built from a finished task: trimmed to fit like any runtime write, never refused.
        trimToFit: true,
        ...this.held(),
      });
      this.traceTransition(from, next.id, stage, from.owner ?? 'runtime');
      return { ok: true, status: 'active' as const, next: await this.created(next) };
    });
  }

  /** The pipeline's status, as an event: with when its first task was posted (a trace's pipeline span). */
  private status(task: Task, by: string, status: PipelineStatus, reason?: string): void {
    if (!task.pipeline || !this.options.events) return;
    const first = this.board.list().filter((t) => t.pipeline === task.pipeline).sort((a, b) => a.id - b.id)[0] ?? task;
    this.options.events.emit({ type: 'pipeline_status', pipeline: task.pipeline, task: task.id, agent: by, status, ...(reason ? { reason } : {}), startedAt: first.createdAt });
  }

  /** A pipeline ended: its status told, and the person's PipelineCompleted hooks run (they cannot undo it). */
  private async ended(task: Task, by: string, status: 'approved' | 'failed' | 'cancelled', reason: string): Promise<void> {
    this.status(task, by, status, reason);
    if (!this.hooks) return;
    const team = this.mailbox.registry.read().team;
    await this.hooks.run('PipelineCompleted', { team, pipeline: task.pipeline, task: task.id, agent: by, workspace: taskWorkspace(this.board.rootDir, task), status, reason });
  }

  /** A review's verdict and issues, as an event, when the task recorded one. */
  private verdict(task: Task, by: string): void {
    const verdict = task.artifacts.verdict;
    if (verdict !== 'approved' && verdict !== 'changes requested') return;
    const issues = (task.artifacts.issues ?? []).map((issue) => ({ text: issue.text, severity: issue.severity }));
    this.options.events?.emit({ type: 'review_verdict', pipeline: task.pipeline, task: task.id, agent: by, verdict, revision: task.revision, issues });
  }

  /**
   * What a task posts with while the person's TaskCreated hooks decide on it: nobody may claim it
   * before they have (held at most as long as they may run, so a lead that dies meanwhile leaves
   * nothing held for good). `created` lets it go, or cancels it.
   */
  held(): { notBefore?: string } {
    if (!this.hooks?.has('TaskCreated')) return {};
    return { notBefore: new Date(Date.now() + this.hooks.longestMs('TaskCreated') + HOOK_HOLD_MARGIN_MS).toISOString() };
  }

  /**
   * A task just posted, put to the person's TaskCreated hooks: one they block is cancelled with
   * their reason (its pipeline ends as cancelled, like any cancel); one they allow is claimable now.
   */
  async created(task: Task): Promise<Task> {
    if (!this.hooks) return task;
    const team = this.mailbox.registry.read().team;
    const by = task.history[0]?.by ?? 'lead';
    const verdict = await this.hooks.run('TaskCreated', {
      team,
      pipeline: task.pipeline,
      task: task.id,
      agent: by,
      workspace: taskWorkspace(this.board.rootDir, task),
      subject: task.subject,
      ...(task.description ? { description: task.description } : {}),
      stage: task.stage,
      by,
    });
    if (verdict.decision !== 'block') {
      if (!task.notBefore) return task;
      const released = await this.board.update(task.id, { notBefore: null });
      return released.ok ? released.task : task;
    }
    const cancelled = await this.board.cancel(task.id, 'hook', `blocked by a TaskCreated hook: ${verdict.reason ?? 'blocked'}`);
    if (cancelled.ok && task.pipeline) await this.ended(cancelled.task, 'hook', 'cancelled', cancelled.task.result ?? 'blocked by a hook');
    return cancelled.ok ? cancelled.task : task;
  }

  private traceTransition(from: Task, to: number | null, next: string, by: string): void {
    this.options.trace?.write({ kind: 'transition', pipeline: from.pipeline ?? 0, from: from.id, to, stage: from.stage ?? 'task', next, by });
  }

  private async notifyLead(from: string, task: Task, status: PipelineStatus, content: string): Promise<void> {
    if (status === 'approved' || status === 'failed' || status === 'cancelled') await this.ended(task, from, status, content);
    const lead = this.mailbox.registry.read().lead;
    await this.mailbox.send(from, lead, content, 'pipeline_update', { pipeline: task.pipeline, status, task: task.id });
  }

  private allocateId(): Promise<number> {
    return this.board.nextPipelineId();
  }
}

/** The transition a completed stage task took (boards written before `signal` was recorded: inferred). */
function transitionOf(task: Task): Transition | undefined {
  if (!task.stage) return undefined;
  const transitions = stageOf(task.stage).transitions;
  if (task.artifacts.signal) return transitions[task.artifacts.signal];
  if (task.stage === 'review') return transitions[task.artifacts.verdict === 'approved' ? 'approve_code' : 'request_revision'];
  return Object.values(transitions)[0];
}

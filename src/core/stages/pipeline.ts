import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { takeNext } from '../board/counter.js';
import { withLock } from '../board/lock.js';
import type { Mailbox } from '../board/mailbox.js';
import type { Stage, Task } from '../board/schemas.js';
import type { Fence, TaskBoard } from '../board/task-board.js';
import { AutoteamError } from '../errors.js';
import { resolveInWorkspace } from '../exec/sandbox-path.js';
import type { QaEntry } from '../tools/ask-clarifying-question.js';
import type { Trace } from '../trace/trace.js';
import { roleForStage, stageOf } from './definitions.js';
import { type HandoffContext, implementationHandoff, reviewHandoff } from './handoff.js';

export type PipelineStatus = 'active' | 'approved' | 'failed';

export interface PipelineState {
  id: number;
  status: PipelineStatus;
  tasks: Task[];
  reason?: string;
  revisions: number;
}

export interface AdvanceResult {
  /** False when the claim was lost (another owner took the task over): nothing was written. */
  ok: boolean;
  status: PipelineStatus;
  next: Task | null;
  reason?: string;
}

export interface PostOptions {
  by?: string;
  startStage?: Stage;
}

const short = (text: string, max = 60) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/** The pipeline state machine. The runtime, not the model, moves work between stages through the board. */
export class Pipeline {
  constructor(
    private readonly board: TaskBoard,
    private readonly mailbox: Mailbox,
    private readonly options: { maxRevisions?: number; trace?: Trace } = {},
  ) {}

  get maxRevisions(): number {
    return this.options.maxRevisions ?? 3;
  }

  workspaceOf(pipeline: number): string {
    return path.join(this.board.rootDir, 'workspace', String(pipeline));
  }

  /** Posts a requirement: a new pipeline whose first task is `requirements` (or `startStage`). */
  async post(requirement: string, options: PostOptions = {}): Promise<Task> {
    const text = requirement.trim();
    if (!text) throw new AutoteamError('a requirement cannot be empty', 'INVALID_REQUIREMENT');
    const pipeline = await this.allocateId();
    const stage = options.startStage ?? 'requirements';
    const context: HandoffContext = { requirement: text, requirements: {} };
    const subject =
      stage === 'requirements' ? `Analyse: ${short(text)}` : stage === 'implementation' ? `Implement: ${short(text)}` : `Review: ${short(text)}`;
    return this.board.create({
      subject,
      description: text,
      role: roleForStage(stage),
      stage,
      pipeline,
      handoff: stage === 'requirements' ? '' : implementationHandoff(context),
      artifacts: { requirement: text, requirements: {} },
      by: options.by ?? 'lead',
    });
  }

  /** Applies a stage signal: completes `task` with its artifacts and posts the next stage's task. */
  async advance(task: Task, fence: Fence, tool: string, input: Record<string, unknown>): Promise<AdvanceResult> {
    if (!task.stage || !task.pipeline) throw new AutoteamError(`task #${task.id} is not a stage task`, 'NOT_A_STAGE_TASK');
    const next = stageOf(task.stage).transitions[tool];
    if (!next) throw new AutoteamError(`${tool} is not a signal of the ${task.stage} stage`, 'BAD_TRANSITION');
    const current = this.board.get(task.id);
    const context = contextOf(current);

    if (tool === 'complete_requirements_analysis') {
      const summary = String(input.summary ?? '');
      const done = await this.board.complete(task.id, fence, summary, { summary });
      return done.ok ? this.postSuccessor(done.task) : { ok: false, status: 'active', next: null, reason: done.reason };
    }

    if (tool === 'submit_for_review') {
      const file = String(input.file);
      const content = fs.readFileSync(resolveInWorkspace(this.workspaceOf(task.pipeline), file), 'utf8');
      const sha256 = createHash('sha256').update(content).digest('hex');
      const submitted = { file, sha256, revision: task.revision };
      const done = await this.board.complete(task.id, fence, `submitted ${file}`, { submitted });
      return done.ok ? this.postSuccessor(done.task) : { ok: false, status: 'active', next: null, reason: done.reason };
    }

    if (tool === 'approve_code') {
      const comment = String(input.comment ?? '');
      const done = await this.board.complete(task.id, fence, comment, { verdict: 'approved', comment });
      if (!done.ok) return { ok: false, status: 'active', next: null, reason: done.reason };
      this.traceTransition(current, null, 'approved', fence.owner);
      await this.notifyLead(fence.owner, current, 'approved', `Pipeline #${task.pipeline} approved: ${comment}`);
      return { ok: true, status: 'approved', next: null };
    }

    // request_revision
    const issues = (input.issues as string[] | undefined) ?? [];
    if (task.revision + 1 > this.maxRevisions) {
      const reason = `max_revisions (${this.maxRevisions}) reached; the reviewer still found ${issues.length} issue(s)`;
      const failed = await this.board.fail(task.id, fence, reason, { verdict: 'changes requested', issues });
      if (!failed.ok) return { ok: false, status: 'active', next: null, reason: failed.reason };
      this.traceTransition(current, null, 'failed', fence.owner);
      await this.notifyLead(fence.owner, current, 'failed', `Pipeline #${task.pipeline} failed: ${reason}`);
      return { ok: true, status: 'failed', next: null, reason };
    }
    const done = await this.board.complete(task.id, fence, `changes requested (${issues.length} issue${issues.length === 1 ? '' : 's'})`, {
      verdict: 'changes requested',
      issues,
    });
    return done.ok ? this.postSuccessor(done.task) : { ok: false, status: 'active', next: null, reason: done.reason };
  }

  /**
   * Posts the task that follows a completed stage task, built only from what that task recorded on
   * the board. Idempotent, so `repair` can call it for a completion whose successor was never posted
   * (the process died, or the create failed, between the two writes).
   */
  private async postSuccessor(done: Task): Promise<AdvanceResult> {
    const context = contextOf(done);
    if (done.stage === 'requirements') {
      return this.postNext(done, 'implementation', 0, implementationHandoff(context), baseArtifacts(context));
    }
    if (done.stage === 'implementation') {
      const submitted = done.artifacts.submitted as { file: string; sha256: string; revision: number };
      const content = fs.readFileSync(resolveInWorkspace(this.workspaceOf(done.pipeline!), submitted.file), 'utf8');
      return this.postNext(done, 'review', done.revision, reviewHandoff(context, submitted.file, content, done.revision, submitted.sha256), {
        ...baseArtifacts(context),
        submitted,
      });
    }
    const issues = (done.artifacts.issues as string[] | undefined) ?? [];
    const file = (done.artifacts.submitted as { file?: string } | undefined)?.file;
    const revision = done.revision + 1;
    return this.postNext(done, 'implementation', revision, implementationHandoff(context, revision, issues, file), {
      ...baseArtifacts(context),
      issues,
    });
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
      if (done.stage === 'review' && done.artifacts.verdict !== 'changes requested') continue;
      if (tasks.some((t) => t.pipeline === done.pipeline && t.artifacts.from === done.id)) continue;
      const result = await this.postSuccessor(done).catch(() => null);
      if (result?.next) posted++;
    }
    return posted;
  }

  /** A safety valve ended the task: fail it, which fails the pipeline, and tell the lead. */
  async fail(task: Task, fence: Fence, reason: string): Promise<AdvanceResult> {
    const failed = await this.board.fail(task.id, fence, reason);
    if (!failed.ok) return { ok: false, status: 'active', next: null, reason: failed.reason };
    if (task.pipeline) {
      this.traceTransition(task, null, 'failed', fence.owner);
      await this.notifyLead(fence.owner, task, 'failed', `Pipeline #${task.pipeline} failed at ${task.stage ?? 'task'} #${task.id}: ${reason}`);
    }
    return { ok: true, status: 'failed', next: null, reason };
  }

  state(pipeline: number): PipelineState {
    const tasks = this.board.list().filter((task) => task.pipeline === pipeline);
    const failed = tasks.find(isFailed);
    const revisions = Math.max(0, ...tasks.map((task) => task.revision));
    if (failed) return { id: pipeline, status: 'failed', tasks, reason: failed.result ?? failed.status, revisions };
    return { id: pipeline, status: pipelineStatus(tasks), tasks, revisions };
  }

  pipelines(): number[] {
    return [...new Set(this.board.list().flatMap((task) => (task.pipeline ? [task.pipeline] : [])))].sort((a, b) => a - b);
  }

  private async postNext(from: Task, stage: Stage, revision: number, handoff: string, artifacts: Record<string, unknown>): Promise<AdvanceResult> {
    const requirement = String(from.artifacts.requirement ?? from.description);
    const file = (artifacts.submitted as { file?: string } | undefined)?.file;
    const subject =
      stage === 'review'
        ? `Review ${file ?? 'submission'} (revision ${revision})`
        : revision > 0
          ? `Revise (${revision}): ${short(requirement)}`
          : `Implement: ${short(requirement)}`;
    // Check-then-create under the pipeline's lock: a successor is posted once, whoever gets there first.
    return withLock(path.join(this.board.dir, `pipeline-${from.pipeline}`), async () => {
      const existing = this.board.list().find((task) => task.pipeline === from.pipeline && task.artifacts.from === from.id);
      if (existing) return { ok: true, status: 'active' as const, next: existing };
      const next = await this.board.create({
        subject,
        description: requirement,
        role: roleForStage(stage),
        stage,
        pipeline: from.pipeline,
        revision,
        handoff,
        artifacts: { ...artifacts, from: from.id },
        by: from.owner ?? 'runtime',
      });
      this.traceTransition(from, next.id, stage, from.owner ?? 'runtime');
      return { ok: true, status: 'active' as const, next };
    });
  }

  private traceTransition(from: Task, to: number | null, next: string, by: string): void {
    this.options.trace?.write({ kind: 'transition', pipeline: from.pipeline ?? 0, from: from.id, to, stage: from.stage ?? 'task', next, by });
  }

  private async notifyLead(from: string, task: Task, status: PipelineStatus, content: string): Promise<void> {
    const lead = this.mailbox.registry.read().lead;
    await this.mailbox.send(from, lead, content, 'pipeline_update', { pipeline: task.pipeline, status, task: task.id });
  }

  private async allocateId(): Promise<number> {
    const used = () => new Set(this.board.list().flatMap((task) => (task.pipeline ? [task.pipeline] : [])));
    return withLock(path.join(this.board.dir, 'pipelines'), () =>
      takeNext(path.join(this.board.dir, '.next-pipeline'), (n) => used().has(n), () => Math.max(0, ...used()) + 1),
    );
  }

}

const isFailed = (task: Task) => task.status === 'failed' || task.status === 'cancelled';

/** One pipeline's status from its tasks: failed if any failed, approved once a review approved it. */
export function pipelineStatus(tasks: readonly Task[]): PipelineStatus {
  if (tasks.some(isFailed)) return 'failed';
  const approved = tasks.some((task) => task.stage === 'review' && task.status === 'completed' && task.artifacts.verdict === 'approved');
  return approved ? 'approved' : 'active';
}

/** Every pipeline's status from one board listing, without re-reading the board. */
export function pipelineStatuses(tasks: readonly Task[]): Map<number, PipelineStatus> {
  const groups = new Map<number, Task[]>();
  for (const task of tasks) if (task.pipeline !== null) groups.set(task.pipeline, [...(groups.get(task.pipeline) ?? []), task]);
  return new Map([...groups].map(([id, group]) => [id, pipelineStatus(group)]));
}

function contextOf(task: Task): HandoffContext {
  return {
    requirement: String(task.artifacts.requirement ?? task.description),
    requirements: (task.artifacts.requirements as Record<string, string> | undefined) ?? {},
    summary: task.artifacts.summary as string | undefined,
    qa: task.artifacts.qa as QaEntry[] | undefined,
  };
}

function baseArtifacts(context: HandoffContext): Record<string, unknown> {
  return {
    requirement: context.requirement,
    requirements: context.requirements,
    ...(context.summary ? { summary: context.summary } : {}),
    ...(context.qa?.length ? { qa: context.qa } : {}),
  };
}

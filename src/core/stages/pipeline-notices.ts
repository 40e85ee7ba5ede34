import type { EventSink } from '../events/emitter.js';
import type { HooksConfig } from '../hooks/config.js';
import { HookRunner } from '../hooks/runner.js';
import type { Mailbox } from '../board/mailbox.js';
import type { Task } from '../board/schemas.js';
import type { TaskBoardLike } from '../board/task-rules.js';
import type { Trace } from '../trace/trace.js';
import type { PipelineStatus } from './pipeline-status.js';
import { taskWorkspace } from './workspace.js';

/** How much longer than its hooks may run a new task stays held for them (see `held`). */
const HOOK_HOLD_MARGIN_MS = 5_000;

export interface NoticeOptions {
  trace?: Trace;
  /** Where its events go (pipeline status, verdicts, retries): the thread's EventSink. */
  events?: EventSink;
  /** The person's hooks: TaskCreated for the tasks it posts, PipelineCompleted when one ends. */
  hooks?: HooksConfig;
}

/**
 * What a pipeline tells when it moves: events, trace lines, the lead's mailbox and the person's
 * hooks. The pipeline decides; this says so.
 */
export class PipelineNotices {
  private readonly hooks: HookRunner | null;

  constructor(
    private readonly board: TaskBoardLike,
    private readonly mailbox: Mailbox,
    private readonly options: NoticeOptions,
  ) {
    const { hooks, events } = options;
    this.hooks = hooks && events && Object.keys(hooks).length ? new HookRunner(hooks, { cwd: board.rootDir, emit: (event) => events.emit(event) }) : null;
  }

  get events(): EventSink | undefined {
    return this.options.events;
  }

  team(): string {
    return this.mailbox.registry.read().team;
  }

  /** The owner of a task just cancelled is told to stop working on it. */
  async stop(by: string, task: Task): Promise<void> {
    if (!task.owner) return;
    // `cancelled`: a notice for the owner's runtime, shown to its model only while it works on that task.
    await this.mailbox.send(by, task.owner, `Task #${task.id} was cancelled by ${by}: stop working on it.`, 'message', { task: task.id, cancelled: true }).catch(() => undefined);
  }

  /** The pipeline's status, as an event: with when its first task was posted (a trace's pipeline span). */
  status(task: Task, by: string, status: PipelineStatus, reason?: string): void {
    if (!task.pipeline || !this.options.events) return;
    const first = this.board.list().filter((t) => t.pipeline === task.pipeline).sort((a, b) => a.id - b.id)[0] ?? task;
    this.options.events.emit({ type: 'pipeline_status', pipeline: task.pipeline, task: task.id, agent: by, status, ...(reason ? { reason } : {}), startedAt: first.createdAt });
  }

  /** A pipeline ended: its status told, and the person's PipelineCompleted hooks run (they cannot undo it). */
  async ended(task: Task, by: string, status: 'approved' | 'failed' | 'cancelled', reason: string): Promise<void> {
    this.status(task, by, status, reason);
    if (!this.hooks) return;
    const team = this.mailbox.registry.read().team;
    await this.hooks.run('PipelineCompleted', { team, pipeline: task.pipeline, task: task.id, agent: by, workspace: taskWorkspace(this.board.rootDir, task), status, reason });
  }

  /** A verdict and its issues, as an event, when the task recorded one. */
  verdict(task: Task, by: string): void {
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

  transition(from: Task, to: number | null, next: string, by: string): void {
    this.options.trace?.write({ kind: 'transition', pipeline: from.pipeline ?? 0, from: from.id, to, stage: from.stage ?? 'task', next, by });
  }

  cancelled(pipeline: number, from: number, by: string): void {
    this.options.trace?.write({ kind: 'transition', pipeline, from, to: null, stage: 'pipeline', next: 'cancelled', by });
  }

  async lead(from: string, task: Task, status: PipelineStatus, content: string): Promise<void> {
    if (status === 'approved' || status === 'failed' || status === 'cancelled') await this.ended(task, from, status, content);
    const lead = this.mailbox.registry.read().lead;
    await this.mailbox.send(from, lead, content, 'pipeline_update', { pipeline: task.pipeline, status, task: task.id });
  }

  /** A general task failed: the lead is told (nobody else would learn that it will not be done). */
  async taskFailed(from: string, task: Task, reason: string): Promise<void> {
    const lead = this.mailbox.registry.read().lead;
    // `failed`: the front ends show the failure from the log (`failed #N: …`), not this message again.
    await this.mailbox.send(from, lead, `Task #${task.id} failed: ${reason}`, 'message', { task: task.id, failed: true }).catch(() => undefined);
  }
}

import type { BlobStore } from '../board/blobs.js';
import type { MemberStatus, Task } from '../board/schemas.js';
import type { Fence } from '../board/task-types.js';
import type { TaskBoardLike } from '../board/task-rules.js';
import type { ModelMessage } from '../model/types.js';
import { taskPrompt } from '../stages/handoff.js';
import type { StageRegistry } from '../stages/stage-registry.js';
import { prepareWorkspace } from '../stages/submission.js';
import { taskWorkspace } from '../stages/workspace.js';
import type { ToolContext } from '../tools/tool.js';
import type { TaskEnds } from './task-ends.js';
import type { TaskOutcome } from './task-outcome.js';
import type { HookScene, TeammateHooks } from './teammate-hooks.js';
import type { TeammateTurns } from './teammate-turns.js';
import { type ToolHost, toolContext } from './tool-context.js';
import { type RepositoryInstructions, startingPaths } from './repository-instructions.js';

/** What working on a task needs of its teammate. */
export interface WorkHost {
  name: string;
  settings: { maxTurns: number; leaseMs: number; repository?: { remote: string } };
  board: TaskBoardLike;
  blobs: BlobStore;
  stages: StageRegistry;
  /** The teammate's own stop; the work stops on it or on a lost lease. */
  signal: AbortSignal;
  identity(): ModelMessage[];
  scene(ctx: Pick<ToolContext, 'task' | 'workspace'>): HookScene;
  /** What its tools are lent (tool-context.ts). */
  tools: ToolHost;
  modelError(ctx: ToolContext, error: unknown): Promise<void>;
  note(task: Task | null, text: string): void;
  activity(task: number | null, text: string): void;
  /** Sets the status without waiting for the registry's write (TeammateStatus.post). */
  postStatus(status: MemberStatus, task: number | null, reason?: string): void;
  /** The repository's instructions for this task (repository mode, unless turned off), or null. */
  instructions(task: Task): RepositoryInstructions | null;
}

/**
 * WORK on one claimed task: the lease renewed by the runtime, the workspace made ready, the first
 * message, then runs of the tool loop until its outcome settles the task (task-outcome.ts). The
 * teammate stays `working` after it: it goes `idle` only when its next look finds no work
 * (teammate.ts), so one that goes straight on to a task already waiting is never listed idle between.
 */
export class TaskWork {
  constructor(
    private readonly host: WorkHost,
    private readonly turns: TeammateTurns,
    private readonly hooks: TeammateHooks,
    private readonly outcome: TaskOutcome,
    private readonly ends: TaskEnds,
  ) {}

  async workOn(task: Task): Promise<void> {
    const { board, settings } = this.host;
    const fence: Fence = { owner: this.host.name, token: task.claims };
    this.host.postStatus('working', task.id);
    this.host.activity(task.id, `claimed #${task.id} ${task.subject}`);
    // A stage this team's config does not have (a task written by hand, or by a host with another
    // config): an attempt that counts, backed off, then failed; not a claim held until its lease ran out.
    if (task.stage && !this.host.stages.has(task.stage)) {
      const why = `task #${task.id} is for stage '${task.stage}', which this team's config does not have (stages: ${this.host.stages.names().join(', ')}): written by hand, or by a host with another autoteam.config.json`;
      await this.ends.unfinished(task, fence, why, 'error');
      return;
    }
    const stage = task.stage ? this.host.stages.get(task.stage) : null;
    const lease = new AbortController();
    const renew = setInterval(() => {
      void board.renewLease(task.id, fence).then(
        (result) => {
          if (!result.ok) lease.abort(new Error(`lease lost: ${result.reason}`));
        },
        () => undefined,
      );
    }, Math.max(50, Math.floor(settings.leaseMs / 3)));
    const signal = AbortSignal.any([this.host.signal, lease.signal]);
    const workspace = taskWorkspace(board.rootDir, task);
    const remote = { rootDir: board.rootDir, ...(settings.repository ? { url: settings.repository.remote } : {}) };
    const prepared = await prepareWorkspace(workspace, task, this.host.blobs, remote);
    for (const note of prepared.notes) this.host.note(task, note);
    if (prepared.gone || prepared.unavailable) {
      clearInterval(renew);
      if (prepared.gone) await this.ends.fail(task, fence, prepared.gone);
      else await this.ends.unfinished(task, fence, prepared.unavailable!, 'error');
      return;
    }
    const ctx = toolContext(this.host.tools, { task, fence, workspace, signal, onFenceLost: (reason) => lease.abort(new Error(`lease lost: ${reason}`)) });
    const prompt = taskPrompt(task);
    const messages: ModelMessage[] = [...this.host.identity(), { role: 'user', content: prompt }];
    const instructions = this.host.instructions(task);
    // The top folder's, and those of the files the pipeline already touched; a repository git cannot read works without.
    await instructions?.touch(startingPaths(task)).catch((error: Error) => this.host.note(task, `could not read the repository's instructions: ${error.message}`));
    try {
      let turnsLeft = settings.maxTurns;
      let nudged = false;
      for (;;) {
        const { outcome, turns } = await this.turns.run(ctx, messages, prompt, turnsLeft, instructions);
        turnsLeft -= turns;
        // A general task's closing text completes it: the person's TaskCompleted hooks may send it back.
        const blocked = outcome.kind === 'end_turn' && !stage && this.hooks.active ? await this.hooks.taskCompleted(this.host.scene(ctx), outcome.text || 'done', ctx.signal) : null;
        const again = await this.outcome.afterLoop(ctx.task ?? task, fence, outcome, { stage, turnsLeft, nudged, blocked });
        if (!again) break;
        nudged ||= again.nudge;
        messages.push({ role: 'user', content: again.say });
      }
    } catch (error) {
      await this.host.modelError(ctx, error);
    } finally {
      clearInterval(renew);
      // Calls no write carried (the claim ended on a refused write: a lease lost, a cancel) still count.
      await board.flushUsage(task.id).catch(() => undefined);
    }
  }
}

import type { Task } from '../board/schemas.js';
import type { EventSink } from '../events/emitter.js';
import type { HookContext, HooksConfig } from '../hooks/index.js';
import { HookRunner } from '../hooks/runner.js';
import { BUILTIN_REGISTRY, type StageRegistry } from '../stages/stage-registry.js';
import type { ToolGate } from './loop.js';

/** Who a hook event happened to, and where. */
export interface HookScene {
  team: string;
  agent: string;
  role: string;
  task: Task | null;
  workspace?: string;
}

/**
 * A teammate's side of the person's hooks: PreToolUse and PostToolUse around every tool call,
 * TaskCompleted before a finishing tool (a stage signal, complete_task) or a general task's closing
 * text completes the task, TeammateIdle when it is about to go idle after work. A block's reason goes
 * back to the agent; nothing here writes the board. Without hooks every check allows at no cost.
 */
export class TeammateHooks {
  private readonly runner: HookRunner | null;

  constructor(
    config: HooksConfig | undefined,
    cwd: string,
    sink: EventSink,
    private readonly stages: StageRegistry = BUILTIN_REGISTRY,
  ) {
    this.runner = config && Object.keys(config).length ? new HookRunner(config, { cwd, emit: (event) => sink.emit(event) }) : null;
  }

  get active(): boolean {
    return this.runner !== null;
  }

  /** The gate the tool loop runs every call through, for the task (or none) in `scene()`. */
  gate(scene: () => HookScene): ToolGate | undefined {
    const runner = this.runner;
    if (!runner) return undefined;
    return {
      before: async (tool, input, id, signal) => {
        const at = scene();
        const pre = await runner.run('PreToolUse', { ...context(at), tool_name: tool, tool_input: input, tool_use_id: id }, { signal });
        if (pre.decision === 'block') return pre.reason ?? 'blocked';
        if (signal.aborted) return UNDECIDED;
        // A tool that would finish the task: the person's checks on completion come first.
        if (at.task && finishes(this.stages, at.task, tool)) return this.completing(at, (input as { result?: string; summary?: string; comment?: string }) ?? {}, signal, tool);
        return null;
      },
      after: async (tool, input, id, result, signal) => {
        const post = await runner.run('PostToolUse', { ...context(scene()), tool_name: tool, tool_input: input, tool_use_id: id, tool_response: result.content, outcome: result.kind }, { signal });
        return post.decision === 'block' ? (post.reason ?? 'blocked') : null;
      },
    };
  }

  /**
   * Before a task is completed: a block's reason (the task stays in progress), or null. `stop` (the
   * teammate's shutdown) kills a hook still running, as it does every check here.
   */
  async taskCompleted(scene: HookScene, result: string | null, stop: AbortSignal): Promise<string | null> {
    if (!this.runner || !scene.task) return null;
    return this.completing(scene, { result: result ?? undefined }, stop);
  }

  /** Before the teammate goes idle after work: a block's reason (it takes another turn), or null. */
  async teammateIdle(scene: HookScene, lastStage: string | null, stop: AbortSignal): Promise<string | null> {
    if (!this.runner) return null;
    const verdict = await this.runner.run('TeammateIdle', { ...context(scene), stage: lastStage, reason: 'nothing left to claim' }, { signal: stop });
    return verdict.decision === 'block' ? (verdict.reason ?? 'blocked') : null;
  }

  private async completing(scene: HookScene, said: { result?: string; summary?: string; comment?: string }, stop: AbortSignal, tool?: string): Promise<string | null> {
    const task = scene.task!;
    const verdict = await this.runner!.run('TaskCompleted', {
      ...context(scene),
      subject: task.subject,
      ...(task.description ? { description: task.description } : {}),
      stage: task.stage,
      result: said.result ?? said.summary ?? said.comment ?? null,
      ...(tool && tool !== 'complete_task' ? { signal: tool } : {}),
    }, { signal: stop });
    if (verdict.decision === 'block') return verdict.reason ?? 'blocked';
    return stop.aborted ? UNDECIDED : null;
  }
}

/**
 * A check the teammate's stop cut short decided nothing: the call or the completion it guarded does
 * not go ahead (the person's policy is never skipped for a shutdown); the task goes back as unfinished.
 */
const UNDECIDED = 'stopped before the hooks decided';

/** Whether calling `tool` ends `task` as done (a stage's signal, or complete_task for a general task). */
function finishes(stages: StageRegistry, task: Task, tool: string): boolean {
  return task.stage ? tool in stages.get(task.stage).transitions : tool === 'complete_task';
}

function context(scene: HookScene): HookContext {
  return {
    team: scene.team,
    pipeline: scene.task?.pipeline ?? null,
    task: scene.task?.id ?? null,
    agent: scene.agent,
    role: scene.role,
    ...(scene.workspace ? { workspace: scene.workspace } : {}),
  };
}

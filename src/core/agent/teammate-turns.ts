import type { Task } from '../board/schemas.js';
import type { TaskBoardLike } from '../board/task-rules.js';
import { addTaskUsage } from '../board/unwritten-usage.js';
import type { ExitReason } from '../events/schema.js';
import type { EventSink } from '../events/emitter.js';
import type { ModelClient, ModelMessage, Usage } from '../model/types.js';
import { GENERAL_SYSTEM_PROMPT } from '../stages/stage.js';
import type { StageRegistry } from '../stages/stage-registry.js';
import { handoffData } from '../stages/handoff-data.js';
import { budgetGap, pipelineUsage } from '../stages/pipeline-status.js';
import { generalTools, stageTools } from '../tools/registry.js';
import type { ToolContext } from '../tools/tool.js';
import type { Trace } from '../trace/trace.js';
import { compactConversation } from './compaction.js';
import { type LoopResult, runLoop } from './loop.js';
import type { TeammateSettings } from './settings.js';
import type { TeammateEvent } from './teammate-events.js';
import type { HookScene, TeammateHooks } from './teammate-hooks.js';
import type { TeammateInbox } from './teammate-inbox.js';
import type { McpToolbox } from '../mcp/toolbox.js';
import { type RepositoryInstructions, touchedPaths } from './repository-instructions.js';

/** What a run of the tool loop needs of its teammate. */
export interface TurnsHost {
  name: string;
  role: string;
  /** The person's words for this teammate, after the stage's system prompt. */
  prompt?: string;
  settings: TeammateSettings;
  board: TaskBoardLike;
  stages: StageRegistry;
  hooks: TeammateHooks;
  inbox: TeammateInbox;
  /** Its MCP servers' tools, when any server is offered to its role. */
  mcp: (() => Promise<McpToolbox>) | null;
  trace: Trace;
  sink: EventSink;
  /** The model of the moment (the lead may swap it between tasks). */
  model(): ModelClient;
  identity(): ModelMessage[];
  scene(ctx: Pick<ToolContext, 'task' | 'workspace'>): HookScene;
  note(task: Task | null, text: string): void;
  activity(task: number | null, text: string): void;
  emit(event: TeammateEvent): void;
  exitWith(reason: string, why: ExitReason): void;
}

/**
 * The tool loop set up for one piece of a teammate's work: the stage's tools and system prompt (or
 * the general ones), usage recorded on the task, compaction, the person's hooks, and what is checked
 * between turns (the pipeline's budget, the inbox).
 */
export class TeammateTurns {
  constructor(private readonly host: TurnsHost) {}

  /**
   * Runs the loop on `messages` (`prompt` is the task's first message, kept through compaction).
   * `instructions`: the repository's, for a task in repository mode; they go ahead of the stage's
   * prompt, and grow as the model's calls touch files in folders with instructions of their own.
   */
  async run(ctx: ToolContext, messages: ModelMessage[], prompt: string, maxTurns: number, instructions: RepositoryInstructions | null = null): Promise<LoopResult> {
    const { name, role, settings } = this.host;
    const stage = ctx.task?.stage ?? null;
    // A task's MCP tools join its stage's (only a task's: reading messages starts no server).
    const mcp = ctx.task && this.host.mcp ? await (await this.host.mcp()).toolsFor(stage ?? 'general', ctx.task) : [];
    const tools = [...(stage ? stageTools(stage, this.host.stages) : generalTools()), ...mcp];
    const stageSystem = stage ? this.host.stages.get(stage).systemPrompt : GENERAL_SYSTEM_PROMPT;
    const own = this.host.prompt ? `${stageSystem}\n\n${this.host.prompt}` : stageSystem;
    const system = instructions ? () => [instructions.text(), own].filter(Boolean).join('\n\n') : own;
    const model = this.host.model();
    // Every model call of a task, compaction included, is added to its usage: the pipeline budgets sum
    // them. The task's next write carries it (a tool's record, the lease's renewal, the claim's end).
    const recordUsage = (usage: Usage): void => {
      this.host.emit({ type: 'usage', name, role, model: model.id, usage });
      if (ctx.task && ctx.fence) this.host.board.recordUsage(ctx.task.id, usage);
    };
    return runLoop({
      model,
      system,
      tools,
      messages,
      ctx,
      agent: { name, role, stage },
      maxTurns,
      maxTokens: settings.maxTokens,
      maxRequestTokens: settings.maxRequestTokens,
      trace: this.host.trace,
      tokenBudget: settings.tokenBudget,
      ...(settings.prices ? { prices: settings.prices } : {}),
      compact: async (current) => {
        this.host.note(ctx.task, 'compacted its conversation');
        return compactConversation({
          model,
          messages: current,
          identity: this.host.identity(),
          taskPrompt: prompt,
          agent: { name, role, stage, task: ctx.task?.id ?? null },
          signal: ctx.signal,
          onUsage: recordUsage,
          maxRequestTokens: settings.maxRequestTokens,
          events: this.host.sink,
          ...(settings.prices ? { prices: settings.prices } : {}),
          pipeline: ctx.task?.pipeline ?? null,
          trace: this.host.trace,
        });
      },
      ...(ctx.task?.stage ? { handoff: handoffData(ctx.task) } : {}),
      onModelCall: recordUsage,
      events: this.host.sink,
      ...(this.host.hooks.active ? { gate: this.host.hooks.gate(() => this.host.scene(ctx)) } : {}),
      onEvent: (event) => {
        if (event.kind === 'model') this.host.emit({ type: 'says', name, role, task: ctx.task?.id ?? null, text: event.summary });
        // The answer to a question is shown once, by the lead; saved requirements are on the board. A
        // call of either that failed is shown, or a run would not say why the work stalled. Calls not
        // run because the task was cancelled or taken over are not: the teammate says once why it stopped.
        if (event.kind === 'tool' && event.outcome !== 'claim_lost' && (!event.ok || !['save_requirement', 'ask_clarifying_question'].includes(event.name ?? ''))) {
          this.host.activity(ctx.task?.id ?? null, `${event.name}${event.ok ? '' : ' ✗'}: ${event.summary}`);
        }
      },
      beforeTurn: async () => {
        // The folders the last turns touched may hold instructions of their own (read once each).
        if (instructions) await instructions.touch(touchedPaths(messages)).catch((error: Error) => this.host.note(ctx.task, `could not read the repository's instructions: ${error.message}`));
        const overBudget = this.budgetExceeded(ctx.task);
        if (overBudget) return { stop: { kind: 'fail', reason: overBudget } };
        const { exit, inject, shutdownRequest } = await this.host.inbox.betweenTurns(ctx.task?.id ?? null);
        if (exit) {
          this.host.exitWith(exit, 'shutdown_requested');
          return { stop: { kind: 'exit', reason: exit } };
        }
        return inject ? { inject, ...(shutdownRequest ? { shutdownRequest } : {}) } : {};
      },
    });
  }

  /** Why the task's pipeline may not make another model call, or null. */
  private budgetExceeded(task: Task | null): string | null {
    if (!task?.pipeline) return null;
    const { board, settings } = this.host;
    const written = pipelineUsage(board.list().filter((t) => t.pipeline === task.pipeline));
    return budgetGap(task.pipeline, addTaskUsage(written, board.unwrittenUsage(task.id)), settings.runtime);
  }
}

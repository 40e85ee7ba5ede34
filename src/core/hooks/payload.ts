import type { HookEventName, ToolOutcomeKind } from '../events/schema.js';

/** What every hook event carries: where on the team it happened. */
export interface HookContext {
  team: string;
  pipeline: number | null;
  task: number | null;
  /** The teammate (or `lead`) it happened to; null for the runtime itself. */
  agent: string | null;
  role?: string;
  /**
   * The folder the work is in (the pipeline's worktree or `workspace/<n>`), when there is one; also
   * in the hook's environment as AUTOTEAM_WORKSPACE, since hooks themselves run in the board's folder.
   */
  workspace?: string;
}

/** What the runtime hands to `HookRunner.run` for each event; it reaches the hook on stdin as JSON. */
export interface HookPayloads {
  PreToolUse: HookContext & {
    tool_name: string;
    tool_input: unknown;
    tool_use_id?: string;
  };
  PostToolUse: HookContext & {
    tool_name: string;
    tool_input: unknown;
    tool_use_id?: string;
    /** The text the model reads as the tool's result. */
    tool_response: string;
    /** How the call ended (`ok`, `refused`, `timeout`, …). */
    outcome: ToolOutcomeKind;
  };
  TaskCreated: HookContext & {
    subject: string;
    description?: string;
    /** null for a general task (matched as `general`). */
    stage: string | null;
    /** Who posted it. */
    by: string;
  };
  TaskCompleted: HookContext & {
    subject: string;
    description?: string;
    stage: string | null;
    /** What the agent reports as the task's result. */
    result: string | null;
    /** The stage signal that ends it (`submit_for_review`, …), when there is one. */
    signal?: string;
  };
  TeammateIdle: HookContext & {
    /** The stage of the task it last worked, or null (matched as `general`). */
    stage: string | null;
    reason?: string;
  };
  PipelineCompleted: HookContext & {
    status: 'approved' | 'failed' | 'cancelled';
    reason?: string;
  };
}

/** What an event's matcher is tested against: the tool, the stage, or the pipeline's final status. */
export function matchTarget<E extends HookEventName>(event: E, payload: HookPayloads[E]): string {
  switch (event) {
    case 'PreToolUse':
    case 'PostToolUse':
      return (payload as HookPayloads['PreToolUse']).tool_name;
    case 'TaskCreated':
    case 'TaskCompleted':
    case 'TeammateIdle':
      return (payload as HookPayloads['TaskCreated']).stage ?? 'general';
    case 'PipelineCompleted':
      return (payload as HookPayloads['PipelineCompleted']).status;
    default:
      throw new Error(`no matcher target for hook event '${String(event)}'`);
  }
}

/**
 * The JSON a hook reads on stdin: the payload, `hook_event_name` and `cwd`, and the names Claude
 * Code gives the same facts (`team_name`, `teammate_name`, `task_id`, `task_subject`,
 * `task_description`), so a hook written for Claude Code's team events reads them unchanged.
 */
export function hookInput<E extends HookEventName>(event: E, payload: HookPayloads[E], cwd: string): string {
  const fields = payload as HookContext & { subject?: string; description?: string };
  return JSON.stringify({
    hook_event_name: event,
    cwd,
    ...payload,
    team_name: fields.team,
    ...(fields.agent ? { teammate_name: fields.agent } : {}),
    ...(fields.task !== null && fields.task !== undefined ? { task_id: fields.task } : {}),
    ...(fields.subject !== undefined ? { task_subject: fields.subject } : {}),
    ...(fields.description !== undefined ? { task_description: fields.description } : {}),
  });
}

import { z } from 'zod';

/**
 * Everything that happens on a team, as one typed event. The REPL, line mode, `run`'s JSON stream,
 * `autoteam events`, OpenTelemetry and hooks all read these; nothing re-derives them from prose.
 * Every event has `type`, `ts` and `team`, and `pipeline`, `task` and `agent` where they apply; the
 * board's log adds `seq`, its place in the one ordered log of the board.
 */

/** Why a claimed task went back to the board without being finished. */
export const RELEASE_KINDS = ['unfinished', 'error', 'shutdown', 'stopped', 'lease_lost', 'owner_dead', 'switched', 'lead'] as const;

/** How a tool call ended, machine-readable (the text the model reads is apart from it). */
export const TOOL_OUTCOMES = [
  'ok',
  'invalid_arguments',
  'unknown_tool',
  'refused',
  'sandbox_denied',
  'limit',
  'timeout',
  'execution_failed',
  'claim_lost',
  'hook_blocked',
  'error',
] as const;

/** Why a teammate's run ended. */
export const EXIT_REASONS = ['idle_timeout', 'shutdown_requested', 'stopped', 'model_error', 'board_unreachable', 'crashed', 'terminated'] as const;

/** What became of a teammate's MCP server (mcp/connection.ts). */
export const MCP_SERVER_STATES = ['started', 'failed', 'exited', 'gone', 'stopped'] as const;

/** The merge queue's steps for one pipeline (lead/merge-queue.ts): in the order they happen. */
export const MERGE_STEPS = ['queued', 'rebased', 'checked', 'merged', 'sent_back', 'waiting', 'error'] as const;

export const HOOK_EVENTS = ['TaskCreated', 'TaskCompleted', 'TeammateIdle', 'PreToolUse', 'PostToolUse', 'PipelineCompleted'] as const;

const common = {
  /** Its place in the board's log (absent until the log assigns it). */
  seq: z.number().int().positive().optional(),
  ts: z.string().min(1),
  team: z.string(),
  pipeline: z.number().int().nullable().optional(),
  task: z.number().int().nullable().optional(),
  agent: z.string().nullable().optional(),
  role: z.string().optional(),
};

const event = <T extends string, S extends z.ZodRawShape>(type: T, shape: S) => z.object({ type: z.literal(type), ...common, ...shape });

const Issue = z.object({ text: z.string(), severity: z.string() });

export const TeamEventSchema = z.discriminatedUnion('type', [
  event('task_posted', { subject: z.string(), stage: z.string().nullable(), revision: z.number().int(), by: z.string() }),
  event('task_claimed', { token: z.number().int(), takeover: z.boolean() }),
  // `token` is the claim that ended (a trace's task attempt); absent when the board did not know it.
  event('task_released', {
    kind: z.enum(RELEASE_KINDS),
    detail: z.string(),
    token: z.number().int().optional(),
    attempt: z.number().int().optional(),
    notBefore: z.string().optional(),
  }),
  event('task_completed', { result: z.string().nullable(), signal: z.string().optional(), token: z.number().int().optional(), next: z.number().int().optional() }),
  event('task_failed', { reason: z.string(), token: z.number().int().optional() }),
  event('task_cancelled', { by: z.string(), reason: z.string() }),
  event('task_retried', { newTask: z.number().int(), by: z.string() }),
  event('model_call', {
    provider: z.string(),
    model: z.string(),
    purpose: z.enum(['turn', 'compaction', 'simulated_user']),
    inputTokens: z.number(),
    outputTokens: z.number(),
    cacheReadTokens: z.number(),
    cacheWriteTokens: z.number(),
    costUsd: z.number().nullable(),
    latencyMs: z.number(),
    stopReason: z.string(),
    /** What the model said in this turn, besides its tool calls. */
    text: z.string(),
  }),
  event('tool_call', {
    tool: z.string(),
    /** The arguments, short (cut), for people and traces. */
    args: z.string(),
    outcome: z.enum(TOOL_OUTCOMES),
    durationMs: z.number(),
    /** What a person sees (not the text the model reads). */
    summary: z.string(),
  }),
  event('question_asked', { questionId: z.string(), question: z.string() }),
  // `asker`: the teammate whose question it answers.
  event('question_answered', { questionId: z.string(), answer: z.string(), by: z.string(), asker: z.string().optional() }),
  event('question_withdrawn', { questionId: z.string(), reason: z.string() }),
  event('criterion_added', { id: z.string(), criterion: z.string() }),
  event('check_ran', { id: z.string(), ok: z.boolean(), exitCode: z.number().nullable(), language: z.string() }),
  event('review_verdict', { verdict: z.enum(['approved', 'changes requested']), revision: z.number().int(), issues: z.array(Issue) }),
  // `startedAt`: when its first task was posted (a trace's pipeline span starts there).
  event('pipeline_status', { status: z.enum(['active', 'approved', 'failed', 'cancelled']), reason: z.string().optional(), startedAt: z.string().optional() }),
  event('teammate_spawned', { model: z.string().optional() }),
  event('teammate_idle', { reason: z.string().optional() }),
  event('teammate_woke', {}),
  event('teammate_dead', { reason: z.string() }),
  event('teammate_exited', { kind: z.enum(['left', 'terminated', 'crashed']), why: z.enum(EXIT_REASONS), reason: z.string(), crashLog: z.string().optional() }),
  /** A runtime remark with no event of its own (a workspace rebuilt, a model switched, a conversation compacted). */
  event('note', { text: z.string() }),
  /** An MCP server of a teammate: started (again), failed to start, exited by itself, gone for good, stopped with its teammate. */
  event('mcp_server', { server: z.string(), state: z.enum(MCP_SERVER_STATES), detail: z.string(), tools: z.number().int().optional() }),
  /** The repository's AGENTS.md / CLAUDE.md files that went into a task's instructions: each one's size and how much of it was kept (0: left out at the cap). */
  event('repository_instructions', { files: z.array(z.object({ path: z.string(), bytes: z.number().int(), kept: z.number().int() })) }),
  /** A step of the merge queue for one pipeline: its branch, the base it goes into, and what happened. */
  event('merge_step', { step: z.enum(MERGE_STEPS), branch: z.string(), into: z.string(), detail: z.string(), commit: z.string().optional() }),
  event('board_outage', { state: z.enum(['down', 'up']), source: z.string(), message: z.string() }),
  event('hook_decision', {
    hook: z.enum(HOOK_EVENTS),
    command: z.string(),
    decision: z.enum(['allow', 'block', 'warn']),
    exitCode: z.number().nullable(),
    reason: z.string().optional(),
    durationMs: z.number(),
  }),
]);

export type TeamEvent = z.infer<typeof TeamEventSchema>;
export type TeamEventType = TeamEvent['type'];
export type ToolOutcomeKind = (typeof TOOL_OUTCOMES)[number];
export type ReleaseKind = (typeof RELEASE_KINDS)[number];
export type ExitReason = (typeof EXIT_REASONS)[number];
export type HookEventName = (typeof HOOK_EVENTS)[number];
export type MergeStep = (typeof MERGE_STEPS)[number];

/** An event of one type, without what the emitter fills in (`ts`, `team`) or the log assigns (`seq`). */
export type EventInput<T extends TeamEventType = TeamEventType> = T extends TeamEventType
  ? Omit<Extract<TeamEvent, { type: T }>, 'seq' | 'ts' | 'team'> & { ts?: string }
  : never;

export const EVENT_TYPES = TeamEventSchema.options.map((option) => option.shape.type.value) as readonly TeamEventType[];

/** Which events a reader wants: after `since` (a seq, or a time), of one pipeline, of some types. */
export interface EventFilter {
  since?: number | Date;
  pipeline?: number;
  types?: readonly TeamEventType[];
}

export function matches(event: TeamEvent, filter: EventFilter): boolean {
  if (typeof filter.since === 'number' && (event.seq ?? 0) <= filter.since) return false;
  if (filter.since instanceof Date && Date.parse(event.ts) < filter.since.getTime()) return false;
  if (filter.pipeline !== undefined && event.pipeline !== filter.pipeline) return false;
  if (filter.types && !filter.types.includes(event.type)) return false;
  return true;
}

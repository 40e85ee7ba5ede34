import type { HandoffData } from '../stages/handoff-data.js';

/** Anthropic Messages shapes, kept to what autoteam uses. */
export interface TextBlock {
  type: 'text';
  text: string;
}

export interface ToolUseBlock {
  type: 'tool_use';
  id: string;
  name: string;
  input: unknown;
  /**
   * The model wrote arguments that are not a JSON object (a provider that passes its text through):
   * what it wrote and why it is refused. The loop answers with a tool error instead of running the tool.
   */
  invalid?: { raw: string; error: string };
}

export interface ToolResultBlock {
  type: 'tool_result';
  tool_use_id: string;
  content: string;
  is_error?: boolean;
}

export type AssistantBlock = TextBlock | ToolUseBlock;
export type ContentBlock = TextBlock | ToolUseBlock | ToolResultBlock;

export interface ModelMessage {
  role: 'user' | 'assistant';
  content: string | ContentBlock[];
}

export interface ToolSpec {
  name: string;
  description: string;
  input_schema: { type: 'object'; [key: string]: unknown };
}

export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
}

/** Who is calling. Real models ignore it; the offline model picks its policy from it. */
export interface AgentContext {
  name: string;
  role: string;
  stage: string | null;
  /** What the call is for: ordinary work, or summarising old turns for compaction. */
  purpose?: 'work' | 'compaction' | 'simulated_user';
  /** The task being worked on (record/replay key calls by agent, task and turn). */
  task?: number | null;
}

export interface ModelRequest {
  system: string;
  messages: ModelMessage[];
  tools: ToolSpec[];
  maxTokens?: number;
  signal?: AbortSignal;
  agent?: AgentContext;
}

/**
 * What a request's text says, as data, for a model that does not read prose (the offline model). It
 * travels beside the request (`ModelClient.create`'s second argument), never in it: providers send
 * only the request. Nothing the runtime writes is ever parsed back from the text.
 */
export interface OfflineContext extends RequestContext {
  /** The task's handoff as data (the same data its text was rendered from). */
  handoff?: HandoffData;
}

/** See OfflineContext. */
export interface RequestContext {
  /** The task being worked, as the board holds it. */
  task?: { id: number; subject: string; description: string; stage: string | null; requirePlan: boolean };
  /** A shutdown request the model is asked to answer (its id, for shutdown_response). */
  shutdownRequest?: string;
  /** For a compaction request: the tool calls of the log to summarise, each with its result. */
  calls?: Array<{ name: string; input: Record<string, unknown>; result?: { content: string; isError: boolean } }>;
}

export type StopReason = 'end_turn' | 'tool_use' | 'max_tokens' | 'stop_sequence' | 'pause_turn' | 'refusal';

export interface ModelResponse {
  content: AssistantBlock[];
  stopReason: StopReason | string;
  usage: Usage;
  model?: string;
}

export interface ModelClient {
  /** Model id as sent to the provider, or `offline-scripted`. */
  readonly id: string;
  /** What the UI shows, e.g. "claude-sonnet-4-5" or "offline scripted model". */
  readonly label: string;
  /** Who serves it (`anthropic`, `openai`, `offline`, …), for events and traces. */
  readonly provider?: string;
  /** `offline`: the request's meaning as data, for a model that does not read prose; providers ignore it. */
  create(request: ModelRequest, offline?: OfflineContext): Promise<ModelResponse>;
  /**
   * Loads what its first request needs, sending nothing: a teammate calls it while it waits for its
   * first task. An HTTP provider's first request in a thread loads Node's fetch (undici, some 70 ms
   * of a core in each worker thread) and builds the SDK's headers; done idle, that is not on the
   * critical path of the teammate's first task. Never throws.
   */
  warm?(): Promise<void>;
}


export const ZERO_USAGE: Usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };

export function addUsage(a: Usage, b: Usage): Usage {
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cacheReadTokens: a.cacheReadTokens + b.cacheReadTokens,
    cacheWriteTokens: a.cacheWriteTokens + b.cacheWriteTokens,
  };
}

import { z } from 'zod';
import { boardWriteRefused } from '../board/atomic-io.js';
import { describeZodError, type Task } from '../board/schemas.js';
import { serializeError } from '../errors.js';
import type { AgentContext, AssistantBlock, ModelClient, ModelMessage, ModelResponse, OfflineContext, ToolResultBlock, ToolUseBlock, Usage } from '../model/types.js';
import { addUsage, ZERO_USAGE } from '../model/types.js';
import type { PriceTable } from '../model/pricing.js';
import type { EventInput, ToolOutcomeKind } from '../events/schema.js';
import { type LoopSignal, type ToolContext, type ToolDefinition, type ToolOutcome, toolSpec } from '../tools/tool.js';
import type { HandoffData } from '../stages/handoff.js';
import { redact, secretValues } from '../trace/redact.js';
import type { Trace } from '../trace/trace.js';
import { estimateTokens } from './compaction.js';
import { tellModelCall } from './model-call-event.js';
import { DEFAULT_MAX_REQUEST_TOKENS, fitRequest } from './request-size.js';
import { keepToolOutput } from './tool-output.js';

/** What ends a run of the loop. The caller (teammate or lead) decides what each means for its task. */
export type LoopOutcome =
  | { kind: 'end_turn'; text: string }
  | { kind: 'idle'; reason: string }
  | Extract<LoopSignal, { kind: 'transition' }>
  | { kind: 'fail'; reason: string }
  | { kind: 'exit'; reason: string }
  | { kind: 'claimed'; task: Task }
  | { kind: 'max_turns'; turns: number }
  /** Every tool call of REFUSED_TURNS turns in a row was refused before it ran (see runLoop). */
  | { kind: 'refused'; reason: string }
  | { kind: 'aborted'; reason: string };

/**
 * Turns in a row whose every tool call the runtime refused before running it — an unknown tool, or
 * arguments its schema rejects — that end the loop. Each refusal tells the model the tools or the
 * schema, so a model that reads them corrects itself in a turn or two; one that repeats itself is in
 * a loop that would spend the rest of its turns in seconds, with no back-off between them.
 */
export const REFUSED_TURNS = 3;

/** How long a model call runs before the loop says it still waits, and how often after that. */
export const MODEL_WAIT_NOTE_MS = 30_000;
const REFUSALS: ReadonlySet<ToolOutcomeKind> = new Set(['unknown_tool', 'invalid_arguments']);

export interface LoopEvent {
  kind: 'model' | 'tool';
  name?: string;
  ok?: boolean;
  /** A tool call's outcome (`claim_lost`: not run, the task is no longer the teammate's). */
  outcome?: ToolOutcomeKind;
  summary: string;
}

export interface BeforeTurn {
  /** Text to put in front of the model (new inbox messages). */
  inject?: string;
  /** The shutdown request `inject` asks the model to answer, as data (OfflineContext). */
  shutdownRequest?: string;
  /** End the loop instead of calling the model. */
  stop?: LoopOutcome;
}

export interface LoopOptions {
  model: ModelClient;
  /** The system prompt, or how to make it before each call (it may grow: the repository's instructions). */
  system: string | (() => string);
  tools: readonly ToolDefinition[];
  /** The conversation; the loop appends to it in place. */
  messages: ModelMessage[];
  ctx: ToolContext;
  agent: AgentContext;
  maxTurns: number;
  maxTokens?: number;
  trace?: Trace;
  beforeTurn?: () => Promise<BeforeTurn>;
  /** Called when the conversation passes `tokenBudget`; returns the replacement conversation. */
  compact?: (messages: ModelMessage[]) => Promise<ModelMessage[]>;
  tokenBudget?: number;
  onEvent?: (event: LoopEvent) => void;
  /** The task's handoff as data, passed beside every request for a model that does not read prose (OfflineContext). */
  handoff?: HandoffData;
  /** The prices a call's `costUsd` is reckoned at (default: the built-in list). */
  prices?: PriceTable;
  /** Called after every model call with its usage (the teammate adds it to the task's). */
  onModelCall?: (usage: Usage) => void;
  /** Where every model call and tool call is told as an event (the thread's EventSink). */
  events?: { emit(input: EventInput): unknown };
  /** The person's hooks around each tool call (see hooks/runner.ts): a block's reason, or null. */
  gate?: ToolGate;
  /** How often a model call that has not answered is said to be waited for (default MODEL_WAIT_NOTE_MS). */
  modelWaitNoteMs?: number;
  /**
   * The most estimated input tokens one request may carry (MAX_REQUEST_TOKENS, default 100,000). A
   * tool result over a quarter of it is cut when it arrives (the whole kept in the workspace), and
   * before every call the oldest results and texts are cut until the request fits.
   */
  maxRequestTokens?: number;
}

/** What the runtime checks around a tool call: before it runs (a reason blocks it) and after. */
export interface ToolGate {
  /** Before a valid call runs; a reason refuses it (a tool error of kind `hook_blocked`). `signal` stops the check (a shutdown). */
  before(tool: string, input: unknown, id: string, signal: AbortSignal): Promise<string | null>;
  /** After it ran; a reason is added to what the model reads. */
  after(tool: string, input: unknown, id: string, result: { content: string; isError: boolean; kind: ToolOutcomeKind }, signal: AbortSignal): Promise<string | null>;
}

export interface LoopResult {
  outcome: LoopOutcome;
  turns: number;
  usage: Usage;
}

/**
 * The one tool loop: call the model, answer every tool_use with a tool_result, stop on a decision.
 * Tool failures are results with is_error, never exceptions; only the first signal in a response counts.
 */
export async function runLoop(options: LoopOptions): Promise<LoopResult> {
  const { model, ctx, messages } = options;
  const byName = new Map(options.tools.map((tool) => [tool.name, tool]));
  // Tool output goes to the model: no secret value of this process's environment may ride along.
  const secrets = secretValues();
  const specs = options.tools.map(toolSpec);
  const ceiling = options.maxRequestTokens ?? DEFAULT_MAX_REQUEST_TOKENS;
  let usage = ZERO_USAGE;
  let lastInputTokens = 0;
  let refusedTurns = 0;
  for (let turn = 0; ; turn++) {
    if (ctx.signal.aborted) return { outcome: { kind: 'aborted', reason: abortReason(ctx.signal) }, turns: turn, usage };
    if (turn >= options.maxTurns) return { outcome: { kind: 'max_turns', turns: turn }, turns: turn, usage };
    const before = (await options.beforeTurn?.()) ?? {};
    if (before.stop) return { outcome: before.stop, turns: turn, usage };
    if (before.inject) appendUserText(messages, before.inject);
    const task = ctx.task;
    // Beside the request, never in it: only a model that does not read prose (the offline one) reads it.
    const offline: OfflineContext = {
      ...(options.handoff ? { handoff: options.handoff } : {}),
      ...(task ? { task: { id: task.id, subject: task.subject, description: task.description, stage: task.stage, requirePlan: task.artifacts.requirePlan === true } } : {}),
      ...(before.shutdownRequest ? { shutdownRequest: before.shutdownRequest } : {}),
    };
    if (options.compact && options.tokenBudget && Math.max(lastInputTokens, estimateTokens(messages)) > options.tokenBudget) {
      const compacted = await options.compact(messages);
      messages.splice(0, messages.length, ...compacted);
      lastInputTokens = 0;
    }
    const system = typeof options.system === 'string' ? options.system : options.system();
    // Compaction may not get under the ceiling (a huge task statement, a summary call that failed to
    // shorten): the request is cut here, whatever came before, so no call carries more.
    fitRequest({ system, tools: specs, messages }, ceiling);

    const started = Date.now();
    // A call that hangs (an endpoint that accepts and never answers) waits out its timeout and the
    // provider's retries: said every half minute, so a person does not watch silence for minutes.
    const waiting = setInterval(() => {
      const seconds = Math.round((Date.now() - started) / 1000);
      options.events?.emit({ type: 'note', pipeline: ctx.task?.pipeline ?? null, task: ctx.task?.id ?? null, agent: options.agent.name, role: options.agent.role, text: `still waiting for the model (${seconds} s so far)` });
    }, options.modelWaitNoteMs ?? MODEL_WAIT_NOTE_MS);
    waiting.unref();
    let response: ModelResponse;
    try {
      response = await model.create(
        {
          system,
          messages,
          tools: specs,
          maxTokens: options.maxTokens,
          signal: ctx.signal,
          agent: { ...options.agent, task: ctx.task?.id ?? null },
        },
        offline,
      );
    } catch (error) {
      if (ctx.signal.aborted) return { outcome: { kind: 'aborted', reason: abortReason(ctx.signal) }, turns: turn, usage };
      throw error;
    } finally {
      clearInterval(waiting);
    }
    // The call's own time: what the runtime does with its answer is not the model's latency.
    const latencyMs = Date.now() - started;
    usage = addUsage(usage, response.usage);
    options.onModelCall?.(response.usage);
    lastInputTokens = response.usage.inputTokens + response.usage.cacheReadTokens + response.usage.outputTokens;
    // The conversation keeps a redacted copy of the model's turn: a secret it typed into a command or a
    // file is not sent back with every later request (the tools still run the input as given).
    messages.push({ role: 'assistant', content: redactBlocks(response.content, secrets) });
    // Its words as the person and the board see them (a lead's reply is printed as it is): redacted.
    const text = redact(
      response.content
        .filter((block) => block.type === 'text')
        .map((block) => block.text)
        .join('\n')
        .trim(),
      secrets,
    );
    tellModelCall(
      { model, response, latencyMs, text, purpose: 'turn', ...(options.prices ? { prices: options.prices } : {}) },
      { agent: options.agent.name, role: options.agent.role, stage: options.agent.stage, task: ctx.task?.id ?? null, pipeline: ctx.task?.pipeline ?? null },
      options,
    );
    if (text) options.onEvent?.({ kind: 'model', summary: text });
    const uses = response.content.filter((block): block is ToolUseBlock => block.type === 'tool_use');
    if (uses.length === 0) return { outcome: { kind: 'end_turn', text }, turns: turn + 1, usage };

    const results: ToolResultBlock[] = [];
    let signal: { tool: string; value: LoopSignal } | null = null;
    let refusal: string | null = null;
    let allRefused = true;
    for (const use of uses) {
      if (signal) {
        results.push({
          type: 'tool_result',
          tool_use_id: use.id,
          content: `Not run: ${signal.tool} already ended this task in the same response.`,
          is_error: true,
        });
        continue;
      }
      const { result, signal: toolSignal, kind } = await runTool(use, byName, options, secrets);
      const content = keepToolOutput(redact(result.content, secrets), use, ctx.workspace, ceiling);
      results.push({ ...result, content });
      if (toolSignal) signal = { tool: use.name, value: toolSignal };
      if (REFUSALS.has(kind)) refusal = kind === 'unknown_tool' ? `unknown tool '${use.name}'` : firstLine(content).replace(/\. Expected: .*$/, '');
      else allRefused = false;
    }
    messages.push({ role: 'user', content: results });
    if (signal) return { outcome: signal.value, turns: turn + 1, usage };
    refusedTurns = allRefused ? refusedTurns + 1 : 0;
    if (refusedTurns >= REFUSED_TURNS) {
      return { outcome: { kind: 'refused', reason: `the model's tool calls were refused ${REFUSED_TURNS} turns in a row (last: ${refusal})` }, turns: turn + 1, usage };
    }
  }
}

async function runTool(
  use: ToolUseBlock,
  byName: ReadonlyMap<string, ToolDefinition>,
  options: LoopOptions,
  secrets: readonly string[],
): Promise<{ result: ToolResultBlock; signal?: LoopSignal; kind: ToolOutcomeKind }> {
  const started = Date.now();
  const answer = (content: string, isError: boolean, signal?: LoopSignal, kind: ToolOutcomeKind = isError ? 'error' : 'ok', display?: string) => {
    options.trace?.write({
      kind: 'tool_call',
      agent: options.agent.name,
      role: options.agent.role,
      stage: options.agent.stage,
      task: options.ctx.task?.id ?? null,
      tool: use.name,
      ok: !isError,
      ms: Date.now() - started,
    });
    const summary = display ?? firstLine(content);
    options.onEvent?.({ kind: 'tool', name: use.name, ok: !isError, outcome: kind, summary });
    options.events?.emit({
      type: 'tool_call',
      pipeline: options.ctx.task?.pipeline ?? null,
      task: options.ctx.task?.id ?? null,
      agent: options.agent.name,
      role: options.agent.role,
      tool: use.name,
      args: shortArgs(use.input, secrets),
      outcome: kind,
      durationMs: Date.now() - started,
      summary,
    });
    const result: ToolResultBlock = { type: 'tool_result', tool_use_id: use.id, content };
    if (isError) result.is_error = true;
    return { result, signal, kind };
  };

  // A claim taken over or cancelled meanwhile: nothing more runs for it.
  const lost = options.ctx.claimLost?.();
  if (lost) return answer(`Not run: ${lost}`, true, undefined, 'claim_lost');
  const tool = byName.get(use.name);
  if (!tool) {
    return answer(
      `Unknown or unavailable tool '${use.name}'. The tools you can use here are: ${[...byName.keys()].join(', ')}.`,
      true,
      undefined,
      'unknown_tool',
    );
  }
  if (use.invalid) {
    const { raw, error } = use.invalid;
    return answer(`The arguments of ${use.name} were not a JSON object (${error}): ${raw}. Call ${use.name} again with valid JSON. Expected: ${describeSchema(tool)}.`, true, undefined, 'invalid_arguments');
  }
  const parsed = tool.inputSchema.safeParse(use.input ?? null);
  if (!parsed.success) {
    return answer(
      `Invalid arguments for ${use.name}: ${describeZodError(parsed.error as z.ZodError)}. Expected: ${describeSchema(tool)}.`,
      true,
      undefined,
      'invalid_arguments',
    );
  }
  const blocked = await options.gate?.before(use.name, parsed.data, use.id, options.ctx.signal);
  if (blocked) {
    return answer(`Blocked by a hook: ${redact(blocked, secrets)}`, true, undefined, 'hook_blocked', `blocked by a hook: ${firstLine(blocked)}`);
  }
  let outcome: ToolOutcome;
  try {
    outcome = await tool.run(parsed.data, options.ctx);
  } catch (error) {
    // The board's own storage refusing a write (a disk that filled or went read-only, a folder whose
    // permissions changed) is no mistake for the model to retry turn after turn, a call each time: the
    // attempt ends here, and its end backs the task off.
    if (boardWriteRefused(error, options.ctx.rootDir)) throw error;
    const { code, message } = serializeError(error);
    return answer(`${use.name} failed (${code}): ${message}`, true, undefined, 'execution_failed');
  }
  const isError = outcome.isError === true;
  const kind = outcome.kind ?? (isError ? 'error' : 'ok');
  const note = await options.gate?.after(use.name, parsed.data, use.id, { content: outcome.content, isError, kind }, options.ctx.signal);
  const content = note ? `${outcome.content}\n\nA hook says: ${redact(note, secrets)}` : outcome.content;
  return answer(content, isError, outcome.signal, kind, outcome.display);
}

function describeSchema(tool: ToolDefinition): string {
  const spec = toolSpec(tool).input_schema as { properties?: Record<string, { type?: unknown }>; required?: string[] };
  const props = Object.entries(spec.properties ?? {}).map(([key, value]) => {
    const required = spec.required?.includes(key) ? '' : '?';
    return `${key}${required}: ${Array.isArray(value.type) ? value.type.join('|') : String(value.type ?? 'any')}`;
  });
  return `{${props.join(', ')}}`;
}

function redactBlocks(blocks: readonly AssistantBlock[], secrets: readonly string[]): AssistantBlock[] {
  if (secrets.length === 0) return [...blocks];
  return blocks.map((block) => {
    if (block.type === 'text') return { ...block, text: redact(block.text, secrets) };
    const input = JSON.stringify(block.input ?? null);
    const clean = redact(input, secrets);
    return clean === input ? block : { ...block, input: JSON.parse(clean) as unknown };
  });
}

function appendUserText(messages: ModelMessage[], text: string): void {
  const last = messages[messages.length - 1];
  if (last?.role === 'user') {
    last.content = typeof last.content === 'string' ? `${last.content}\n\n${text}` : [...last.content, { type: 'text', text }];
  } else {
    messages.push({ role: 'user', content: text });
  }
}

function firstLine(text: string): string {
  const line = text.split('\n', 1)[0] ?? '';
  return line.length > 160 ? `${line.slice(0, 157)}…` : line;
}

function abortReason(signal: AbortSignal): string {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason.message : typeof reason === 'string' ? reason : 'aborted';
}

/** A tool call's arguments for people and traces: one line, cut (the model's own text is on the board). */
function shortArgs(input: unknown, secrets: readonly string[]): string {
  const text = JSON.stringify(input ?? {}) ?? '{}';
  return redact(text.length > 200 ? `${text.slice(0, 199)}…` : text, secrets);
}

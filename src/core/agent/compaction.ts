import type { EventInput } from '../events/schema.js';
import type { PriceTable } from '../model/pricing.js';
import type { ContentBlock, ModelClient, ModelMessage, RequestContext, Usage } from '../model/types.js';
import { cutText } from '../sizes.js';
import { redact, secretValues } from '../trace/redact.js';
import type { Trace } from '../trace/trace.js';
import { tellModelCall } from './model-call-event.js';

export interface CompactionInput {
  model: ModelClient;
  messages: readonly ModelMessage[];
  /** The identity opening to re-inject (two messages). */
  identity: ModelMessage[];
  /** The task statement the conversation started from; kept verbatim. */
  taskPrompt: string;
  agent: { name: string; role: string; stage: string | null; task?: number | null };
  signal?: AbortSignal;
  /** Told the summary call's usage. */
  onUsage?: (usage: Usage) => void;
  /** Told the summary call as a `model_call` of purpose `compaction` (priced by `prices`), with the task's pipeline. */
  events?: { emit(input: EventInput): unknown };
  prices?: PriceTable;
  pipeline?: number | null;
  /** Where the call is traced as the loop's are: a run's summary counts its calls from the trace. */
  trace?: Trace;
  /** The ceiling of one request (MAX_REQUEST_TOKENS): the log to summarise is cut to fit under it. */
  maxRequestTokens?: number;
}

/** Characters of one text or tool result in the log to summarise; the task statement is kept apart. */
const TRANSCRIPT_PIECE_CHARS = 4_000;

/** Rough token estimate (4 characters a token), used when the provider's count is not at hand. */
export function estimateTokens(messages: readonly ModelMessage[]): number {
  let chars = 0;
  for (const message of messages) chars += typeof message.content === 'string' ? message.content.length : JSON.stringify(message.content).length;
  return Math.ceil(chars / 4);
}

function renderBlock(block: ContentBlock): string {
  switch (block.type) {
    case 'text':
      return cutText(block.text, TRANSCRIPT_PIECE_CHARS, 'not in this log', { tail: 500 });
    case 'tool_use':
      return `[called ${block.name} ${JSON.stringify(block.input)}]`;
    case 'tool_result':
      // One line per result (JSON string), so the log stays parseable and quotes stay intact.
      return `[result${block.is_error ? ' (error)' : ''}: ${JSON.stringify(block.content.slice(0, TRANSCRIPT_PIECE_CHARS))}]`;
  }
}

/** The tool calls of a log, each paired with its result: the compaction request's context. */
function callsOf(messages: readonly ModelMessage[]): NonNullable<RequestContext['calls']> {
  const calls: NonNullable<RequestContext['calls']> = [];
  const byId = new Map<string, (typeof calls)[number]>();
  for (const message of messages) {
    if (typeof message.content === 'string') continue;
    for (const block of message.content) {
      if (block.type === 'tool_use') {
        const call = { name: block.name, input: (block.input ?? {}) as Record<string, unknown> };
        calls.push(call);
        byId.set(block.id, call);
      } else if (block.type === 'tool_result') {
        const call = byId.get(block.tool_use_id);
        if (call) Object.assign(call, { result: { content: block.content.slice(0, TRANSCRIPT_PIECE_CHARS), isError: block.is_error === true } });
      }
    }
  }
  return calls;
}

export function renderTranscript(messages: readonly ModelMessage[]): string {
  return messages
    .map((m) => `${m.role.toUpperCase()}: ${typeof m.content === 'string' ? renderBlock({ type: 'text', text: m.content }) : m.content.map(renderBlock).join('\n')}`)
    .join('\n\n');
}

/**
 * Replaces the conversation with identity + the task + a model-written summary of the work so far.
 * Everything after the opening is summarised, so no tool_use is ever left without its result.
 */
export async function compactConversation(input: CompactionInput): Promise<ModelMessage[]> {
  // From the task message on: it may carry an earlier summary and inbox text added to the turn.
  const body = input.messages.slice(2);
  const system =
    'You summarise an agent\'s work log so it can continue after its context is cleared. Keep: decisions, files written, commands run and their outcomes, open problems, and what remains to do. Plain text, under 300 words.';
  // The summary request is held under the same ceiling as every other: a long log loses its middle.
  const room = input.maxRequestTokens ? Math.max(4_000, input.maxRequestTokens * 4 - system.length - 1_000) : Infinity;
  const transcript = cutText(renderTranscript(body), room, 'the middle of the log is left out (MAX_REQUEST_TOKENS)', { tail: Math.floor(room / 2) });
  const started = Date.now();
  const response = await input.model.create(
    {
      system,
      messages: [{ role: 'user', content: `Summarise this work log:\n\n${transcript}` }],
      tools: [],
      maxTokens: 1024,
      signal: input.signal,
      agent: { ...input.agent, purpose: 'compaction' },
    },
    // The log's calls as data, for a model that does not read the transcript (the offline one).
    { calls: callsOf(body) },
  );
  const latencyMs = Date.now() - started;
  // A summary is a model call like any other: it counts toward the task's (and pipeline's) usage.
  input.onUsage?.(response.usage);
  const summary = response.content
    .filter((block) => block.type === 'text')
    .map((block) => block.text)
    .join('\n')
    .trim();
  const { name, role, stage, task } = input.agent;
  tellModelCall(
    { model: input.model, response, latencyMs, text: redact(summary, secretValues()), purpose: 'compaction', ...(input.prices ? { prices: input.prices } : {}) },
    { agent: name, role, stage, task: task ?? null, pipeline: input.pipeline ?? null },
    input,
  );
  return [
    ...input.identity,
    {
      role: 'user',
      content: `${input.taskPrompt}\n\n<progress-summary>\n${summary || '(no summary)'}\n</progress-summary>\nContinue from where you left off.`,
    },
  ];
}

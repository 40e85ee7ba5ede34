import type OpenAI from 'openai';
import type { AssistantBlock, ModelMessage, ModelRequest, ModelResponse, StopReason, ToolSpec, Usage } from '../../types.js';
import { isRecord } from '../common.js';
import { DEFAULT_MAX_TOKENS } from './settings.js';

/**
 * The runtime's Messages shapes to and from chat completions: tool_use / tool_result blocks become
 * `tool_calls` and one `tool` message per result, ids kept.
 */

type ChatMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;

/** `completionTokens`: OpenAI itself wants max_completion_tokens (newer models refuse max_tokens); compatible servers know max_tokens. */
export function toParams(model: string, request: ModelRequest, completionTokens: boolean): OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming {
  const messages: ChatMessage[] = [];
  if (request.system) messages.push({ role: 'system', content: request.system });
  for (const message of request.messages) messages.push(...toChatMessages(message));
  const limit = request.maxTokens ?? DEFAULT_MAX_TOKENS;
  return {
    model,
    ...(completionTokens ? { max_completion_tokens: limit } : { max_tokens: limit }),
    messages,
    ...(request.tools.length ? { tools: request.tools.map(toTool) } : {}),
  };
}

function toTool(tool: ToolSpec): OpenAI.Chat.Completions.ChatCompletionTool {
  return { type: 'function', function: { name: tool.name, description: tool.description, parameters: tool.input_schema } };
}

/** One runtime message as chat messages: tool results first (one `tool` message each), then any text. */
function toChatMessages(message: ModelMessage): ChatMessage[] {
  if (typeof message.content === 'string') return [{ role: message.role, content: message.content }];
  if (message.role === 'assistant') {
    const text = message.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('\n');
    const calls = message.content.flatMap((block) =>
      block.type === 'tool_use' ? [{ id: block.id, type: 'function' as const, function: { name: block.name, arguments: JSON.stringify(block.input ?? {}) } }] : [],
    );
    return [{ role: 'assistant', content: text || null, ...(calls.length ? { tool_calls: calls } : {}) }];
  }
  const out: ChatMessage[] = [];
  const texts: string[] = [];
  for (const block of message.content) {
    if (block.type === 'tool_result') out.push({ role: 'tool', tool_call_id: block.tool_use_id, content: block.is_error ? `Error: ${block.content}` : block.content });
    else if (block.type === 'text') texts.push(block.text);
  }
  if (texts.length) out.push({ role: 'user', content: texts.join('\n') });
  return out;
}

/** A chat completion as the runtime's response, or null when `completion` is not one (a wrong endpoint). */
export function fromCompletion(completion: unknown): ModelResponse | null {
  const choice = isRecord(completion) && Array.isArray(completion.choices) ? (completion.choices[0] as unknown) : undefined;
  if (!isRecord(choice) || !isRecord(choice.message)) return null;
  const message = choice.message;
  const content: AssistantBlock[] = [];
  if (typeof message.content === 'string' && message.content.trim()) content.push({ type: 'text', text: message.content });
  for (const call of Array.isArray(message.tool_calls) ? (message.tool_calls as unknown[]) : []) {
    if (!isRecord(call) || !isRecord(call.function) || typeof call.function.name !== 'string') continue;
    const id = typeof call.id === 'string' && call.id ? call.id : `call_${content.length}`;
    content.push({ type: 'tool_use', id, name: call.function.name, ...parseArguments(call.function.arguments) });
  }
  const usage = isRecord(completion) && isRecord(completion.usage) ? completion.usage : {};
  const tokens = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) ? value : 0);
  const cached = isRecord(usage.prompt_tokens_details) ? tokens(usage.prompt_tokens_details.cached_tokens) : 0;
  const mapped: Usage = { inputTokens: tokens(usage.prompt_tokens), outputTokens: tokens(usage.completion_tokens), cacheReadTokens: cached, cacheWriteTokens: 0 };
  const hasCalls = content.some((block) => block.type === 'tool_use');
  return {
    content,
    stopReason: stopReason(typeof choice.finish_reason === 'string' ? choice.finish_reason : null, hasCalls),
    usage: mapped,
    ...(isRecord(completion) && typeof completion.model === 'string' ? { model: completion.model } : {}),
  };
}

function stopReason(finish: string | null, hasCalls: boolean): StopReason | string {
  if (hasCalls || finish === 'tool_calls' || finish === 'function_call') return 'tool_use';
  if (finish === 'length') return 'max_tokens';
  if (finish === 'content_filter') return 'refusal';
  return 'end_turn';
}

/** Tool arguments as the model wrote them; text that is not a JSON object is kept, for a tool error. */
function parseArguments(raw: unknown): { input: unknown; invalid?: { raw: string; error: string } } {
  if (typeof raw !== 'string' || raw.trim() === '') return { input: {} };
  try {
    const value: unknown = JSON.parse(raw);
    if (isRecord(value) && !Array.isArray(value)) return { input: value };
    return { input: {}, invalid: { raw: raw.slice(0, 500), error: 'not a JSON object' } };
  } catch (error) {
    return { input: {}, invalid: { raw: raw.slice(0, 500), error: (error as Error).message } };
  }
}

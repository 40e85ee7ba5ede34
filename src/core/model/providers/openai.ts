import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import { ConfigError, ModelError } from '../../errors.js';
import { connectionDetail, isRecord, oneLine } from './shared.js';
import type { OpenAIModelConfig } from './openai-config.js';

export type { OpenAIModelConfig } from './openai-config.js';
import {
  type AssistantBlock,
  type ModelClient,
  type ModelMessage,
  type ModelRequest,
  type ModelResponse,
  type StopReason,
  type ToolSpec,
  type Usage,
} from '../types.js';

export const DEFAULT_OPENAI_BASE_URL = 'https://api.openai.com/v1';
const DEFAULT_TIMEOUT_MS = 120_000;
const DEFAULT_MAX_RETRIES = 4;
const DEFAULT_MAX_TOKENS = 8192;

export interface OpenAIModelOptions extends Omit<OpenAIModelConfig, 'kind'> {
  maxRetries?: number;
  fetch?: typeof fetch;
}

/**
 * ModelClient over the OpenAI chat-completions API, with the official SDK: the runtime's Messages
 * shapes (tool_use / tool_result blocks) become `tool_calls` and one `tool` message per result, ids
 * kept. The SDK retries 429 and 5xx; what no retry fixes is one line that names the endpoint, never
 * the key.
 */
export class OpenAIModel implements ModelClient {
  readonly id: string;
  readonly label: string;
  readonly provider = 'openai';
  readonly endpoint: string;
  // Private fields: `util.inspect(model)` must never print the key held by the SDK client.
  readonly #client: OpenAI;
  readonly #secret: string | null;
  readonly #timeoutMs: number;
  readonly #maxRetries: number;
  /** OpenAI itself wants max_completion_tokens (newer models refuse max_tokens); compatible servers know max_tokens. */
  readonly #completionTokens: boolean;

  constructor(options: OpenAIModelOptions) {
    const baseURL = options.baseURL ?? DEFAULT_OPENAI_BASE_URL;
    let url: URL;
    try {
      url = new URL(baseURL);
    } catch {
      throw new ConfigError(`OPENAI_BASE_URL is not a URL: '${baseURL.replace(/\/\/[^@/]*@/, '//***@')}'`);
    }
    if (url.username || url.password) throw new ConfigError('OPENAI_BASE_URL must not contain user:password@');
    if (!options.apiKey && !options.baseURL) throw new ConfigError('the OpenAI provider needs OPENAI_API_KEY (or OPENAI_BASE_URL for a local server)');
    this.id = options.model;
    this.endpoint = `${url.protocol}//${url.host}${url.pathname.replace(/\/$/, '')}`;
    this.label = options.baseURL ? `${this.id} via ${url.host}` : this.id;
    this.#secret = options.apiKey && options.apiKey.length >= 8 ? options.apiKey : null;
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#maxRetries = options.maxRetries ?? DEFAULT_MAX_RETRIES;
    this.#completionTokens = url.host === 'api.openai.com';
    this.#client = new OpenAI({
      // A local server takes any key; passing one keeps the SDK from reading the environment.
      apiKey: options.apiKey ?? 'no-key',
      baseURL,
      timeout: this.#timeoutMs,
      maxRetries: this.#maxRetries,
      logLevel: 'off',
      ...(options.fetch ? { fetch: options.fetch } : {}),
    });
  }

  async create(request: ModelRequest): Promise<ModelResponse> {
    let completion: OpenAI.Chat.Completions.ChatCompletion;
    try {
      completion = await this.#client.chat.completions.create(toParams(this.id, request, this.#completionTokens), { signal: request.signal ?? null });
    } catch (error) {
      throw this.#toModelError(error, request.signal);
    }
    return this.#fromCompletion(completion);
  }

  #fromCompletion(completion: unknown): ModelResponse {
    const choice = isRecord(completion) && Array.isArray(completion.choices) ? (completion.choices[0] as unknown) : undefined;
    if (!isRecord(choice) || !isRecord(choice.message)) {
      throw new ModelError(this.#clean(`${this.endpoint}/chat/completions did not answer with a chat completion: check OPENAI_BASE_URL`), 'MODEL_BAD_RESPONSE');
    }
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

  #toModelError(error: unknown, signal: AbortSignal | undefined): ModelError {
    if (signal?.aborted || error instanceof APIUserAbortError) return new ModelError(`Call to ${this.id} was aborted`, 'MODEL_ABORTED');
    if (error instanceof APIConnectionTimeoutError) {
      return new ModelError(this.#clean(`No answer from ${this.endpoint} within ${this.#timeoutMs} ms (${this.#maxRetries} retries): check the endpoint`), 'MODEL_TIMEOUT');
    }
    if (error instanceof APIConnectionError) {
      return new ModelError(this.#clean(`Cannot reach the model API at ${this.endpoint} (${connectionDetail(error)}): check OPENAI_BASE_URL and the network`), 'MODEL_UNREACHABLE');
    }
    if (error instanceof APIError && typeof error.status === 'number') {
      const body = isRecord(error.error) && typeof error.error.message === 'string' ? error.error.message : '';
      const said = `${error.status}${body ? `: ${body}` : ''}`;
      if (error.status === 401 || error.status === 403) {
        return new ModelError(this.#clean(`OPENAI_API_KEY was rejected by ${this.endpoint} (${said}): check the key`), 'MODEL_AUTH');
      }
      if (error.status === 404) {
        const aboutModel = /model/i.test(body) || body.includes(this.id);
        return aboutModel
          ? new ModelError(this.#clean(`Model '${this.id}' was not found at ${this.endpoint} (${said}): set --model or MODEL_ID to a model this endpoint serves`), 'MODEL_NOT_FOUND')
          : new ModelError(this.#clean(`${this.endpoint}/chat/completions does not exist (${said}): check OPENAI_BASE_URL (the API root, with /v1)`), 'MODEL_ERROR');
      }
      const retried = error.status === 408 || error.status === 409 || error.status === 429 || error.status >= 500;
      return new ModelError(this.#clean(`Model API at ${this.endpoint} answered ${said}${retried && this.#maxRetries ? ` after ${this.#maxRetries} retries` : ''} (model '${this.id}')`), 'MODEL_ERROR');
    }
    return new ModelError(this.#clean(`Call to ${this.id} at ${this.endpoint} failed: ${error instanceof Error ? error.message : String(error)}`), 'MODEL_ERROR');
  }

  /** One line, bounded, and never the key (a server may echo it back). */
  #clean(message: string): string {
    return oneLine(this.#secret ? message.split(this.#secret).join('[redacted]') : message, 500);
  }
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

type ChatMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;

function toParams(model: string, request: ModelRequest, completionTokens: boolean): OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming {
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

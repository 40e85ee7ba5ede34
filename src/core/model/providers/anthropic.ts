import Anthropic, {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  APIUserAbortError,
  type ClientOptions,
} from '@anthropic-ai/sdk';
import { ConfigError, ModelError } from '../../errors.js';
import { connectionDetail, isRecord, oneLine } from './shared.js';
import { DEFAULT_BASE_URL, DEFAULT_MAX_RETRIES, DEFAULT_MAX_TOKENS, DEFAULT_MODEL_ID, DEFAULT_TIMEOUT_MS, checkBaseURL, displayURL } from './anthropic-config.js';
import type {
  AssistantBlock,
  ContentBlock,
  ModelClient,
  ModelMessage,
  ModelRequest,
  ModelResponse,
  ToolSpec,
  Usage,
} from '../types.js';

/** Same shape as the SDK's logger; the UI passes one to collect SDK warnings in its log. */
export interface ModelLogger {
  error(message: string, ...rest: unknown[]): void;
  warn(message: string, ...rest: unknown[]): void;
  info(message: string, ...rest: unknown[]): void;
  debug(message: string, ...rest: unknown[]): void;
}

export interface AnthropicModelOptions {
  /** Sent as `x-api-key`. Exactly one of apiKey / authToken. */
  apiKey?: string;
  /** Sent as `Authorization: Bearer`. */
  authToken?: string;
  /** API root, without `/v1`. Defaults to https://api.anthropic.com (the environment is not read here). */
  baseURL?: string;
  model?: string;
  /** Per attempt; the SDK retries timeouts too. */
  timeoutMs?: number;
  maxRetries?: number;
  fetch?: ClientOptions['fetch'];
  /** Where SDK warnings go. Default: dropped, because workers write under an ink UI. */
  logger?: ModelLogger;
  /** Overrides the SDK's `anthropic-version` header, for vendors that do not know 1.x's new version. */
  anthropicVersion?: string;
  /** Let the SDK emit OpenTelemetry spans to a globally registered tracer. Default false. */
  openTelemetry?: boolean;
}

export {
  DEFAULT_BASE_URL,
  DEFAULT_MAX_RETRIES,
  DEFAULT_MAX_TOKENS,
  DEFAULT_MODEL_ID,
  DEFAULT_TIMEOUT_MS,
  loadModelConfig,
  type AnthropicModelConfig,
  type ModelConfig,
  type OfflineModelConfig,
} from './anthropic-config.js';

const DROP_LOGS: ModelLogger = { error() {}, warn() {}, info() {}, debug() {} };
const EPHEMERAL = { type: 'ephemeral' } as const;

/** ModelClient over the Anthropic Messages API (or an Anthropic-compatible vendor). */
export class AnthropicModel implements ModelClient {
  readonly id: string;
  readonly label: string;
  readonly provider = 'anthropic';
  /** The API root as shown in messages (no credentials, no query). */
  readonly endpoint: string;
  // Private fields: `util.inspect(model)` must never print the key held by the SDK client.
  readonly #client: Anthropic;
  readonly #secret: string;
  readonly #rawBaseURL: string;
  readonly #credentialName: 'ANTHROPIC_API_KEY' | 'ANTHROPIC_AUTH_TOKEN';
  readonly #timeoutMs: number;
  readonly #maxRetries: number;

  constructor(options: AnthropicModelOptions) {
    const { apiKey, authToken } = options;
    if (!apiKey && !authToken) {
      throw new ConfigError('AnthropicModel needs an API key (ANTHROPIC_API_KEY) or an auth token (ANTHROPIC_AUTH_TOKEN)');
    }
    if (apiKey && authToken) {
      throw new ConfigError('AnthropicModel takes an API key or an auth token, not both');
    }
    const baseURL = options.baseURL ?? DEFAULT_BASE_URL;
    checkBaseURL(baseURL);
    this.id = options.model ?? DEFAULT_MODEL_ID;
    this.label = this.id;
    this.endpoint = displayURL(baseURL);
    this.#secret = (apiKey ?? authToken)!;
    this.#rawBaseURL = baseURL;
    this.#credentialName = apiKey ? 'ANTHROPIC_API_KEY' : 'ANTHROPIC_AUTH_TOKEN';
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#maxRetries = options.maxRetries ?? DEFAULT_MAX_RETRIES;

    this.#client = new Anthropic({
      // Passing the credential keeps the SDK from reading the environment or a profile on disk.
      ...(apiKey ? { apiKey } : { authToken: authToken! }),
      baseURL,
      timeout: this.#timeoutMs,
      maxRetries: this.#maxRetries,
      ...(options.fetch ? { fetch: options.fetch } : {}),
      logger: options.logger ?? DROP_LOGS,
      logLevel: options.logger ? 'warn' : 'off',
      ...(options.openTelemetry ? {} : { openTelemetry: false }),
      defaultHeaders: {
        // SDK 1.x sends an API key as `Authorization: Bearer`; the Messages API convention, which
        // Anthropic-compatible vendors check, is `x-api-key` (Bearer is for ANTHROPIC_AUTH_TOKEN).
        ...(apiKey ? { 'x-api-key': apiKey, authorization: null } : {}),
        ...(options.anthropicVersion ? { 'anthropic-version': options.anthropicVersion } : {}),
      },
    });
  }

  async create(request: ModelRequest): Promise<ModelResponse> {
    let message: unknown;
    try {
      message = await this.#client.messages.create(toParams(this.id, request), { signal: request.signal ?? null });
    } catch (error) {
      throw this.#toModelError(error, request.signal);
    }
    return this.#fromMessage(message);
  }

  #fromMessage(message: unknown): ModelResponse {
    if (!isRecord(message) || !Array.isArray(message.content)) {
      const got = typeof message === 'string' ? `text '${oneLine(message, 80)}'` : typeof message;
      throw new ModelError(
        this.#clean(`${this.endpoint}/v1/messages did not answer with a Messages API response (got ${got}): check ANTHROPIC_BASE_URL`),
        'MODEL_BAD_RESPONSE',
      );
    }
    const content: AssistantBlock[] = [];
    for (const block of message.content as unknown[]) {
      if (!isRecord(block)) continue;
      if (block.type === 'text' && typeof block.text === 'string') {
        content.push({ type: 'text', text: block.text });
      } else if (block.type === 'tool_use' && typeof block.id === 'string' && typeof block.name === 'string') {
        content.push({ type: 'tool_use', id: block.id, name: block.name, input: block.input ?? {} });
      }
      // Other block types (thinking, server tools) only come back for features we never request.
    }
    const usage = isRecord(message.usage) ? message.usage : {};
    const tokens = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) ? value : 0);
    const mapped: Usage = {
      inputTokens: tokens(usage.input_tokens),
      outputTokens: tokens(usage.output_tokens),
      cacheReadTokens: tokens(usage.cache_read_input_tokens),
      cacheWriteTokens: tokens(usage.cache_creation_input_tokens),
    };
    return {
      content,
      stopReason: typeof message.stop_reason === 'string' ? message.stop_reason : 'end_turn',
      usage: mapped,
      ...(typeof message.model === 'string' && { model: message.model }),
    };
  }

  #toModelError(error: unknown, signal: AbortSignal | undefined): ModelError {
    const cause = this.#safeCause(error);
    if (signal?.aborted || error instanceof APIUserAbortError) {
      return new ModelError(`Call to ${this.id} was aborted`, 'MODEL_ABORTED', cause);
    }
    if (error instanceof APIConnectionTimeoutError) {
      return new ModelError(
        this.#clean(
          `No answer from ${this.endpoint} within ${this.#timeoutMs} ms (${this.#maxRetries} retries): ` +
            'check the endpoint, or raise ANTHROPIC_TIMEOUT_MS',
        ),
        'MODEL_TIMEOUT',
        cause,
      );
    }
    if (error instanceof APIConnectionError) {
      return new ModelError(
        this.#clean(
          `Cannot reach the model API at ${this.endpoint} (${connectionDetail(error)}): ` +
            'check ANTHROPIC_BASE_URL and the network',
        ),
        'MODEL_UNREACHABLE',
        cause,
      );
    }
    if (error instanceof APIError && typeof error.status === 'number') {
      return this.#statusError(error, error.status, cause);
    }
    const detail = error instanceof Error ? error.message : String(error);
    return new ModelError(this.#clean(`Call to ${this.id} at ${this.endpoint} failed: ${detail}`), 'MODEL_ERROR', cause);
  }

  #statusError(error: APIError, status: number, cause: ErrorOptions | undefined): ModelError {
    const apiMessage = error.apiMessage ?? (typeof error.error === 'string' ? error.error : null);
    const said = `${[String(status), error.type].filter(Boolean).join(' ')}${apiMessage ? `: ${apiMessage}` : ''}`;
    if (status === 401 || status === 403) {
      const advice =
        status === 403
          ? `check that the credential may use model '${this.id}'`
          : this.#credentialName === 'ANTHROPIC_API_KEY'
            ? 'check the key, or set ANTHROPIC_AUTH_TOKEN instead if this endpoint expects a bearer token'
            : 'check the token, or set ANTHROPIC_API_KEY instead if this endpoint expects an x-api-key';
      return new ModelError(
        this.#clean(`${this.#credentialName} was rejected by ${this.endpoint} (${said}): ${advice}`),
        'MODEL_AUTH',
        cause,
      );
    }
    if (status === 404) {
      const text = `${apiMessage ?? ''}`.toLowerCase();
      if (text.includes('model') || text.includes(this.id.toLowerCase())) {
        return new ModelError(
          this.#clean(`Model '${this.id}' was not found at ${this.endpoint} (${said}): set MODEL_ID to a model this endpoint serves`),
          'MODEL_NOT_FOUND',
          cause,
        );
      }
      return new ModelError(
        this.#clean(
          `${this.endpoint}/v1/messages does not exist (${said}): check ANTHROPIC_BASE_URL (the API root, without /v1)`,
        ),
        'MODEL_ERROR',
        cause,
      );
    }
    const retried = status === 408 || status === 409 || status === 429 || status >= 500;
    const after = retried && this.#maxRetries > 0 ? ` after ${this.#maxRetries} retries` : '';
    return new ModelError(
      this.#clean(`Model API at ${this.endpoint} answered ${said}${after} (model '${this.id}')`),
      'MODEL_ERROR',
      cause,
    );
  }

  /** One line, bounded, and never the credential (a vendor may echo it back in an error body). */
  #clean(message: string): string {
    let text = message;
    // The raw base URL may carry a query; errors from fetch quote it.
    if (this.#rawBaseURL !== this.endpoint) text = text.split(this.#rawBaseURL).join(this.endpoint);
    if (this.#secret.length >= 8) text = text.split(this.#secret).join('[redacted]');
    return oneLine(text, 500);
  }

  #safeCause(error: unknown): ErrorOptions | undefined {
    const text = error instanceof Error ? `${error.message} ${String(error.cause ?? '')}` : String(error);
    return text.includes(this.#secret) ? undefined : { cause: error };
  }
}

function toParams(model: string, request: ModelRequest): Anthropic.MessageCreateParamsNonStreaming {
  return {
    model,
    max_tokens: request.maxTokens ?? DEFAULT_MAX_TOKENS,
    // The API rejects empty text blocks, so an empty system prompt is left out.
    ...(request.system ? { system: [{ type: 'text', text: request.system, cache_control: EPHEMERAL }] } : {}),
    ...(request.tools.length > 0 && { tools: toTools(request.tools) }),
    messages: request.messages.map(toMessageParam),
  };
}

/** A cache breakpoint on the last tool caches the whole tool list; the one on system caches both. */
function toTools(tools: ToolSpec[]): Anthropic.Tool[] {
  return tools.map((tool, index) => ({
    name: tool.name,
    description: tool.description,
    input_schema: tool.input_schema,
    ...(index === tools.length - 1 && { cache_control: EPHEMERAL }),
  }));
}

function toMessageParam(message: ModelMessage): Anthropic.MessageParam {
  if (typeof message.content === 'string') return { role: message.role, content: message.content };
  return { role: message.role, content: message.content.map(toBlockParam) };
}

// Rebuilt field by field so that anything else a caller keeps on a block never reaches the API.
function toBlockParam(block: ContentBlock): Anthropic.ContentBlockParam {
  switch (block.type) {
    case 'text':
      return { type: 'text', text: block.text };
    case 'tool_use':
      return { type: 'tool_use', id: block.id, name: block.name, input: block.input };
    case 'tool_result':
      return {
        type: 'tool_result',
        tool_use_id: block.tool_use_id,
        content: block.content,
        ...(block.is_error && { is_error: true }),
      };
  }
}

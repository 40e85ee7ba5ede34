import Anthropic, { type ClientOptions } from '@anthropic-ai/sdk';
import { ConfigError } from '../../../errors.js';
import type { ModelClient, ModelRequest, ModelResponse } from '../../types.js';
import { EndpointHistory, politeFetch, WARM_REQUEST } from '../common.js';
import { oneLine } from '../../../words.js';
import { fromMessage, toParams } from './convert.js';
import { badResponseError, type CallSite, toModelError } from './errors.js';
import { DEFAULT_BASE_URL, DEFAULT_MAX_RETRIES, DEFAULT_MODEL_ID, DEFAULT_TIMEOUT_MS } from './settings.js';
import { checkBaseURL, displayURL } from './url.js';

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

const DROP_LOGS: ModelLogger = { error() {}, warn() {}, info() {}, debug() {} };

/** ModelClient over the Anthropic Messages API (or an Anthropic-compatible vendor). */
export class AnthropicModel implements ModelClient {
  readonly id: string;
  readonly label: string;
  readonly provider = 'anthropic';
  /** The API root as shown in messages (no credentials, no query). */
  readonly endpoint: string;
  // Private fields: `util.inspect(model)` must never print the key held by the SDK client.
  readonly #client: Anthropic;
  readonly #site: CallSite;
  readonly #history = new EndpointHistory();

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
    const secret = (apiKey ?? authToken)!;
    const endpoint = this.endpoint;
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const maxRetries = options.maxRetries ?? DEFAULT_MAX_RETRIES;
    this.#site = {
      id: this.id,
      endpoint,
      timeoutMs,
      maxRetries,
      credentialName: apiKey ? 'ANTHROPIC_API_KEY' : 'ANTHROPIC_AUTH_TOKEN',
      // One line, bounded, and never the credential (a vendor may echo it back in an error body).
      clean(message) {
        let text = message;
        // The raw base URL may carry a query; errors from fetch quote it.
        if (baseURL !== endpoint) text = text.split(baseURL).join(endpoint);
        if (secret.length >= 6) text = text.split(secret).join('[redacted]');
        return oneLine(text, 500);
      },
      safeCause(error) {
        const text = error instanceof Error ? `${error.message} ${String(error.cause ?? '')}` : String(error);
        return text.includes(secret) ? undefined : { cause: error };
      },
    };

    this.#client = new Anthropic({
      // Passing the credential keeps the SDK from reading the environment or a profile on disk.
      ...(apiKey ? { apiKey } : { authToken: authToken! }),
      baseURL,
      timeout: timeoutMs,
      maxRetries,
      fetch: politeFetch(options.fetch ?? globalThis.fetch),
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
      throw this.#history.judge(toModelError(error, request.signal, this.#site));
    }
    const response = fromMessage(message);
    if (!response) throw this.#history.judge(badResponseError(message, this.#site));
    this.#history.answered();
    return response;
  }

  /** Builds a request as create() would (the SDK's headers, Node's fetch loaded), and sends nothing. */
  async warm(): Promise<void> {
    try {
      await this.#client.buildRequest({ method: 'post', path: '/v1/messages', body: toParams(this.id, WARM_REQUEST) });
    } catch {
      // its first request says what is wrong
    }
  }
}

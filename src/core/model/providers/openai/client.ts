import OpenAI from 'openai';
import { ConfigError } from '../../../errors.js';
import type { ModelClient, ModelRequest, ModelResponse } from '../../types.js';
import { EndpointHistory, politeFetch, WARM_REQUEST } from '../common.js';
import { oneLine } from '../../../words.js';
import { fromCompletion, toParams } from './convert.js';
import { badResponseError, type CallSite, readableErrors, toModelError } from './errors.js';
import { DEFAULT_MAX_RETRIES, DEFAULT_OPENAI_BASE_URL, DEFAULT_TIMEOUT_MS, type OpenAISettings } from './settings.js';
import { parseBaseURL } from './url.js';

export type OpenAIModelOptions = OpenAISettings & {
  maxRetries?: number;
  fetch?: typeof fetch;
};

/**
 * ModelClient over the OpenAI chat-completions API, with the official SDK (conversion in convert.ts).
 * The SDK retries 429 and 5xx; what no retry fixes is one line that names the endpoint, never the key.
 */
export class OpenAIModel implements ModelClient {
  readonly id: string;
  readonly label: string;
  readonly provider = 'openai';
  readonly endpoint: string;
  // Private fields: `util.inspect(model)` must never print the key held by the SDK client.
  readonly #client: OpenAI;
  readonly #site: CallSite;
  readonly #history = new EndpointHistory();
  /** OpenAI itself wants max_completion_tokens (newer models refuse max_tokens); compatible servers know max_tokens. */
  readonly #completionTokens: boolean;

  constructor(options: OpenAIModelOptions) {
    const baseURL = options.baseURL ?? DEFAULT_OPENAI_BASE_URL;
    const url = parseBaseURL(baseURL);
    if (!options.apiKey && !options.baseURL) throw new ConfigError('the OpenAI provider needs OPENAI_API_KEY (or OPENAI_BASE_URL for a local server)');
    this.id = options.model;
    this.endpoint = `${url.protocol}//${url.host}${url.pathname.replace(/\/$/, '')}`;
    this.label = options.baseURL ? `${this.id} via ${url.host}` : this.id;
    const secret = options.apiKey && options.apiKey.length >= 6 ? options.apiKey : null;
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const maxRetries = options.maxRetries ?? DEFAULT_MAX_RETRIES;
    this.#site = {
      id: this.id,
      endpoint: this.endpoint,
      timeoutMs,
      maxRetries,
      // A server may echo the key back.
      clean: (message) => oneLine(secret ? message.split(secret).join('[redacted]') : message, 500),
    };
    this.#completionTokens = url.host === 'api.openai.com';
    this.#client = new OpenAI({
      // A local server takes any key; passing one keeps the SDK from reading the environment.
      apiKey: options.apiKey ?? 'no-key',
      baseURL,
      timeout: timeoutMs,
      maxRetries,
      logLevel: 'off',
      fetch: readableErrors(politeFetch(options.fetch ?? globalThis.fetch)),
    });
  }

  async create(request: ModelRequest): Promise<ModelResponse> {
    let completion: OpenAI.Chat.Completions.ChatCompletion;
    try {
      completion = await this.#client.chat.completions.create(toParams(this.id, request, this.#completionTokens), { signal: request.signal ?? null });
    } catch (error) {
      throw this.#history.judge(toModelError(error, request.signal, this.#site));
    }
    const response = fromCompletion(completion);
    if (!response) throw this.#history.judge(badResponseError(this.#site));
    this.#history.answered();
    return response;
  }

  /** Builds a request as create() would (the SDK's headers, Node's fetch loaded), and sends nothing. */
  async warm(): Promise<void> {
    try {
      await this.#client.buildRequest({ method: 'post', path: '/chat/completions', body: toParams(this.id, WARM_REQUEST, this.#completionTokens) });
    } catch {
      // its first request says what is wrong
    }
  }
}

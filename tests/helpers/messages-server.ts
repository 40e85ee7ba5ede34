/**
 * A loopback HTTP server that speaks just enough of the Anthropic Messages API
 * (`POST /v1/messages`, non-streaming) to test the real SDK path end to end.
 *
 * ```ts
 * const server = await MessagesServer.start([
 *   ok(toolUseMessage('read_file', { path: 'a.py' })),
 *   overloaded(),                        // 529 with retry-after-ms: 1, so the SDK retries at once
 *   (req) => ok(textMessage(`you sent ${req.body.messages.length} messages`)),
 * ]);
 * const model = new AnthropicModel({ apiKey: 'sk-test', baseURL: server.url });
 * …
 * expect(server.requests[0]!.headers['x-api-key']).toBe('sk-test');
 * server.assertDone();                   // every step used, nothing unexpected happened
 * await server.close();
 * ```
 *
 * Each request consumes the next scripted step. A request beyond the script, a request to another
 * path, a body that is not JSON, or a step that throws is answered with HTTP 500 (with
 * `x-should-retry: false`, so the SDK does not retry it) and a body that says what happened, and
 * the same text is pushed onto `server.errors`, so the test fails loudly either way.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  /** 0-based position among all requests the server received. */
  index: number;
  method: string;
  /** Path with query, e.g. `/v1/messages`. */
  path: string;
  /** Header names lower-cased, repeated headers joined with ', '. Nothing is removed. */
  headers: Record<string, string>;
  /** The body parsed as JSON (`undefined` when it is not JSON; see `rawBody`). */
  // `any` so that tests can read into it (`body.tools[0].cache_control`) without casts.
  body: any;
  rawBody: string;
}

export interface ScriptedReply {
  /** Default 200. */
  status?: number;
  headers?: Record<string, string>;
  /** Sent as JSON, or as text/plain when a string (unless `headers` give a content-type). */
  body: unknown;
}

export interface StepContext {
  /** Aborts when the client hangs up before the reply is sent, or when the server closes. */
  signal: AbortSignal;
}

export type ScriptStep =
  | ScriptedReply
  | ((request: RecordedRequest, context: StepContext) => ScriptedReply | Promise<ScriptedReply>);

export interface MessagesServerOptions {
  /** The only path served. Default `/v1/messages`. */
  path?: string;
}

export class MessagesServer {
  /** Every request received, in order, including unexpected ones. */
  readonly requests: RecordedRequest[] = [];
  /** What went wrong on the server side: unexpected requests, bad bodies, throwing steps. */
  readonly errors: string[] = [];
  /** Base URL to give the SDK (`baseURL`), e.g. `http://127.0.0.1:40123`. */
  readonly url: string;

  readonly #server: Server;
  readonly #steps: ScriptStep[];
  readonly #path: string;
  readonly #closing = new AbortController();
  readonly #waiters: Array<{ count: number; resolve: () => void }> = [];

  private constructor(server: Server, steps: ScriptStep[], path: string) {
    this.#server = server;
    this.#steps = steps;
    this.#path = path;
    const { port } = server.address() as AddressInfo;
    this.url = `http://127.0.0.1:${port}`;
  }

  static async start(steps: ScriptStep[] = [], options: MessagesServerOptions = {}): Promise<MessagesServer> {
    let instance: MessagesServer | undefined;
    const server = createServer((req, res) => {
      const self = instance!;
      self.#handle(req, res).catch((error: unknown) => {
        // A client that hangs up mid-upload is not a test failure; anything else is.
        if (!res.destroyed) self.#fail(res, `handler failed: ${(error as Error).message ?? String(error)}`);
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    instance = new MessagesServer(server, [...steps], options.path ?? '/v1/messages');
    return instance;
  }

  /** Append steps to the script. */
  enqueue(...steps: ScriptStep[]): void {
    this.#steps.push(...steps);
  }

  /** Steps not yet consumed. */
  get remaining(): number {
    return this.#steps.length;
  }

  /** Resolves once at least `count` requests have been received (no polling, no sleeps). */
  waitForRequests(count: number): Promise<void> {
    if (this.requests.length >= count) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push({ count, resolve }));
  }

  /** Throws if anything unexpected happened or scripted steps were left unused. */
  assertDone(): void {
    const problems = [...this.errors];
    if (this.#steps.length > 0) problems.push(`${this.#steps.length} scripted step(s) were never requested`);
    if (problems.length > 0) throw new Error(`MessagesServer: ${problems.join('; ')}`);
  }

  /** Stops listening and drops open connections (including held requests). */
  async close(): Promise<void> {
    this.#closing.abort();
    await new Promise<void>((resolve) => {
      this.#server.close(() => resolve());
      this.#server.closeAllConnections();
    });
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const rawBody = Buffer.concat(chunks).toString('utf8');
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
    }
    let body: unknown;
    let parseError: string | undefined;
    try {
      body = rawBody ? JSON.parse(rawBody) : undefined;
    } catch (error) {
      parseError = (error as Error).message;
    }
    const recorded: RecordedRequest = {
      index: this.requests.length,
      method: req.method ?? '',
      path: req.url ?? '',
      headers,
      body,
      rawBody,
    };
    this.requests.push(recorded);
    this.#wake();

    const where = `request #${recorded.index + 1} (${recorded.method} ${recorded.path})`;
    if (recorded.method !== 'POST' || recorded.path.split('?')[0] !== this.#path) {
      return this.#fail(res, `unexpected ${where}: only POST ${this.#path} is served`);
    }
    if (parseError !== undefined) return this.#fail(res, `${where} body is not JSON: ${parseError}`);
    if (isRecord(body) && body.stream === true) {
      return this.#fail(res, `${where} asked for streaming, which MessagesServer does not speak`);
    }
    const step = this.#steps.shift();
    if (step === undefined) {
      return this.#fail(res, `unexpected ${where}: the script has no step left (${this.requests.length - 1} used)`);
    }

    const hangUp = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) hangUp.abort();
    });
    const onClosing = () => hangUp.abort();
    this.#closing.signal.addEventListener('abort', onClosing, { once: true });
    let reply: ScriptedReply;
    try {
      reply = typeof step === 'function' ? await step(recorded, { signal: hangUp.signal }) : step;
    } catch (error) {
      if (hangUp.signal.aborted) return; // the client or the test went away; nobody to answer
      return this.#fail(res, `step for ${where} threw: ${(error as Error).message ?? String(error)}`);
    } finally {
      this.#closing.signal.removeEventListener('abort', onClosing);
    }
    if (res.destroyed) return;
    send(res, reply);
  }

  #fail(res: ServerResponse, message: string): void {
    this.errors.push(message);
    if (res.destroyed) return;
    send(res, {
      status: 500,
      headers: { 'x-should-retry': 'false' },
      body: errorBody('api_error', `MessagesServer: ${message}`),
    });
  }

  #wake(): void {
    for (let i = this.#waiters.length - 1; i >= 0; i--) {
      const waiter = this.#waiters[i]!;
      if (this.requests.length >= waiter.count) {
        this.#waiters.splice(i, 1);
        waiter.resolve();
      }
    }
  }
}

/** Same as `MessagesServer.start`. */
export function startMessagesServer(steps: ScriptStep[] = [], options?: MessagesServerOptions): Promise<MessagesServer> {
  return MessagesServer.start(steps, options);
}

function send(res: ServerResponse, reply: ScriptedReply): void {
  const isText = typeof reply.body === 'string';
  const payload = isText ? (reply.body as string) : JSON.stringify(reply.body);
  const headers: Record<string, string> = {
    'content-type': isText ? 'text/plain; charset=utf-8' : 'application/json',
    'request-id': `req_${randomUUID().replaceAll('-', '').slice(0, 20)}`,
  };
  for (const [name, value] of Object.entries(reply.headers ?? {})) headers[name.toLowerCase()] = value;
  res.writeHead(reply.status ?? 200, headers);
  res.end(payload);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

// ---- Messages API bodies -------------------------------------------------------------------

export interface TextBlockBody {
  type: 'text';
  text: string;
}

export interface ToolUseBlockBody {
  type: 'tool_use';
  id: string;
  name: string;
  input: unknown;
}

export type ResponseBlockBody = TextBlockBody | ToolUseBlockBody;

export interface UsageCounts {
  inputTokens?: number;
  outputTokens?: number;
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
}

export interface MessageOptions {
  id?: string;
  model?: string;
  /** Default: 'tool_use' when the content has a tool_use block, else 'end_turn'. */
  stopReason?: string;
  usage?: UsageCounts;
}

export const SCRIPTED_MODEL_ID = 'claude-scripted-test';

export function textBlock(text: string): TextBlockBody {
  return { type: 'text', text };
}

export function toolUseBlock(name: string, input: unknown, id = `toolu_${randomId()}`): ToolUseBlockBody {
  return { type: 'tool_use', id, name, input };
}

/** A Messages API `usage` object (default 10 in, 5 out, no cache). */
export function usageBody(counts: UsageCounts = {}) {
  return {
    input_tokens: counts.inputTokens ?? 10,
    output_tokens: counts.outputTokens ?? 5,
    cache_read_input_tokens: counts.cacheReadTokens ?? 0,
    cache_creation_input_tokens: counts.cacheWriteTokens ?? 0,
    cache_creation: null,
    inference_geo: null,
    output_tokens_details: null,
    server_tool_use: null,
    service_tier: 'standard',
    speed: null,
  };
}

/** A full Messages API response body (`type: 'message'`). */
export function messageBody(content: ResponseBlockBody[] | string, options: MessageOptions = {}) {
  const blocks = typeof content === 'string' ? [textBlock(content)] : content;
  return {
    id: options.id ?? `msg_${randomId()}`,
    type: 'message',
    role: 'assistant',
    model: options.model ?? SCRIPTED_MODEL_ID,
    content: blocks,
    stop_reason: options.stopReason ?? (blocks.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn'),
    stop_sequence: null,
    stop_details: null,
    container: null,
    diagnostics: null,
    usage: usageBody(options.usage),
  };
}

export function textMessage(text: string, options?: MessageOptions) {
  return messageBody([textBlock(text)], options);
}

/** An assistant turn that calls one tool, optionally preceded by some text. */
export function toolUseMessage(
  name: string,
  input: unknown,
  options: MessageOptions & { toolUseId?: string; text?: string } = {},
) {
  const blocks: ResponseBlockBody[] = options.text ? [textBlock(options.text)] : [];
  blocks.push(toolUseBlock(name, input, options.toolUseId));
  return messageBody(blocks, options);
}

/** A Messages API error body. */
export function errorBody(type: string, message: string) {
  return { type: 'error', error: { type, message } };
}

// ---- Scripted replies ----------------------------------------------------------------------

export function ok(body: unknown, headers?: Record<string, string>): ScriptedReply {
  return { status: 200, body, ...(headers && { headers }) };
}

export function errorReply(
  status: number,
  type: string,
  message: string,
  headers?: Record<string, string>,
): ScriptedReply {
  return { status, body: errorBody(type, message), ...(headers && { headers }) };
}

/** 529 overloaded, asking the SDK to retry after 1 ms (it honours `retry-after-ms`). */
export function overloaded(): ScriptedReply {
  return errorReply(529, 'overloaded_error', 'Overloaded', { 'retry-after-ms': '1' });
}

/** 429 rate limited, asking the SDK to retry after 1 ms. */
export function rateLimited(): ScriptedReply {
  return errorReply(429, 'rate_limit_error', 'Number of request tokens has exceeded your per-minute rate limit', {
    'retry-after-ms': '1',
  });
}

export function unauthorized(message = 'invalid x-api-key'): ScriptedReply {
  return errorReply(401, 'authentication_error', message);
}

export function modelNotFound(model: string): ScriptedReply {
  return errorReply(404, 'not_found_error', `model: ${model}`);
}

/** A step that never answers: the request stays open until the client hangs up or the server closes. */
export function hang(): ScriptStep {
  return (_request, { signal }) =>
    new Promise<ScriptedReply>((_resolve, reject) => {
      signal.addEventListener('abort', () => reject(new Error('client went away')), { once: true });
    });
}

function randomId(): string {
  return randomUUID().replaceAll('-', '').slice(0, 24);
}

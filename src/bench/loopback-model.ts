import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import type { Task } from '../core/board/schemas.js';
import { ScriptedModel } from '../core/model/scripted/scripted-model.js';
import type { ContentBlock, ModelMessage, ModelRequest, ModelResponse, OfflineContext } from '../core/model/types.js';
import { handoffData } from '../core/stages/handoff-data.js';

/**
 * A zero-latency model for the scale benchmark: an HTTP server on 127.0.0.1 that speaks the
 * Anthropic Messages API (non-streaming `POST <base>/v1/messages`, what the real provider sends) and
 * answers every request at once with what the offline scripted model answers for that conversation.
 * Teammates run the real `anthropic` provider against it, so the model path is real HTTP, the SDK and
 * both conversions, with no model time of its own.
 *
 * The scripted model reads who is asking and the task's handoff as data, never from the prompt. Each
 * teammate gets its own base URL, `<url>/agent/<name>`, so the path names the agent; its task is the
 * one the board shows in progress under its name (its handoff fixed at the task's first request, as
 * the loop fixes it when the task starts).
 */

const TextBlock = z.object({ type: z.literal('text'), text: z.string() });
const ToolUse = z.object({ type: z.literal('tool_use'), id: z.string(), name: z.string(), input: z.unknown() });
const ToolResult = z.object({
  type: z.literal('tool_result'),
  tool_use_id: z.string(),
  content: z.union([z.string(), z.array(z.object({ type: z.string(), text: z.string().optional() }))]).optional(),
  is_error: z.boolean().optional(),
});
const Block = z.discriminatedUnion('type', [TextBlock, ToolUse, ToolResult]);
const MessagesBody = z.object({
  model: z.string(),
  max_tokens: z.number().int().positive(),
  system: z.union([z.string(), z.array(TextBlock.passthrough())]).optional(),
  tools: z.array(z.object({ name: z.string(), description: z.string().optional(), input_schema: z.object({ type: z.literal('object') }).passthrough() })).optional(),
  messages: z.array(z.object({ role: z.enum(['user', 'assistant']), content: z.union([z.string(), z.array(Block)]) })),
});
type MessagesBody = z.infer<typeof MessagesBody>;

/** The Messages API body as the runtime's ModelRequest: the inverse of providers/anthropic/convert.ts. */
export function toModelRequest(body: MessagesBody): ModelRequest {
  const system = typeof body.system === 'string' ? body.system : (body.system ?? []).map((block) => block.text).join('\n');
  const messages: ModelMessage[] = body.messages.map((message) => ({
    role: message.role,
    content: typeof message.content === 'string' ? message.content : message.content.map(toBlock),
  }));
  const tools = (body.tools ?? []).map((tool) => ({ name: tool.name, description: tool.description ?? '', input_schema: tool.input_schema }));
  return { system, messages, tools, maxTokens: body.max_tokens };
}

function toBlock(block: z.infer<typeof Block>): ContentBlock {
  if (block.type === 'text') return { type: 'text', text: block.text };
  if (block.type === 'tool_use') return { type: 'tool_use', id: block.id, name: block.name, input: block.input };
  const content = typeof block.content === 'string' ? block.content : (block.content ?? []).map((part) => part.text ?? '').join('\n');
  return { type: 'tool_result', tool_use_id: block.tool_use_id, content, ...(block.is_error ? { is_error: true } : {}) };
}

/** The runtime's ModelResponse as a Messages API response body. */
export function toMessageBody(response: ModelResponse, id: string): Record<string, unknown> {
  return {
    id,
    type: 'message',
    role: 'assistant',
    model: response.model ?? 'offline-scripted',
    content: response.content.map((block) => (block.type === 'text' ? { type: 'text', text: block.text } : { type: 'tool_use', id: block.id, name: block.name, input: block.input })),
    stop_reason: response.stopReason,
    stop_sequence: null,
    usage: {
      input_tokens: response.usage.inputTokens,
      output_tokens: response.usage.outputTokens,
      cache_read_input_tokens: response.usage.cacheReadTokens,
      cache_creation_input_tokens: response.usage.cacheWriteTokens,
    },
  };
}

export interface LoopbackModelOptions {
  /** Each teammate's role, by name (the path names the agent; the role comes from the team). */
  roles: ReadonlyMap<string, string>;
  /** The task the board shows in progress under `agent`'s name, read fresh (null: none). */
  taskOf(agent: string): Promise<Task | null>;
}

const AGENT_PATH = /^\/agent\/([A-Za-z0-9_-]+)\/v1\/messages$/;

export class LoopbackModelServer {
  /** Requests answered, and requests refused (a bad path or body: the bench fails on any). */
  readonly counts = { answered: 0, refused: 0 };
  readonly errors: string[] = [];
  readonly url: string;
  readonly #server: Server;
  readonly #model = new ScriptedModel();
  readonly #options: LoopbackModelOptions;
  /** Each agent's current conversation: its task and the handoff as it was when the task started. */
  readonly #contexts = new Map<string, { task: Task; offline: OfflineContext }>();

  private constructor(server: Server, options: LoopbackModelOptions) {
    this.#server = server;
    this.#options = options;
    this.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  static async start(options: LoopbackModelOptions): Promise<LoopbackModelServer> {
    let instance: LoopbackModelServer | undefined;
    const server = createServer((req, res) => void instance!.#handle(req, res));
    // Sixteen pipelines' teammates keep connections open at once; the default backlog is plenty, the
    // keep-alive timeout must outlast the gaps between one teammate's calls.
    server.keepAliveTimeout = 60_000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    instance = new LoopbackModelServer(server, options);
    return instance;
  }

  /** The base URL a teammate's provider spec gets: the path names it. */
  baseURL(agent: string): string {
    return `${this.url}/agent/${agent}`;
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => {
      this.#server.close(() => resolve());
      this.#server.closeAllConnections();
    });
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const agent = AGENT_PATH.exec(req.url ?? '')?.[1];
      if (req.method !== 'POST' || !agent) return this.#refuse(res, 404, `no such endpoint: ${req.method} ${req.url}`);
      const role = this.#options.roles.get(agent);
      if (!role) return this.#refuse(res, 404, `no teammate named '${agent}' in the bench's team`);
      const parsed = MessagesBody.safeParse(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      if (!parsed.success) return this.#refuse(res, 400, `request of ${agent} is not a Messages API body: ${parsed.error.issues[0]?.path.join('.')}: ${parsed.error.issues[0]?.message}`);
      const request = toModelRequest(parsed.data);
      const context = await this.#contextOf(agent);
      request.agent = { name: agent, role, stage: context?.task.stage ?? null, task: context?.task.id ?? null };
      const response = await this.#model.create(request, context?.offline ?? {});
      this.counts.answered++;
      send(res, 200, toMessageBody(response, `msg_bench_${this.counts.answered}`));
    } catch (error) {
      this.#refuse(res, 500, `loopback model failed: ${(error as Error).stack ?? String(error)}`);
    }
  }

  /**
   * The agent's task, read from the board on every request (a teammate may keep its conversation
   * from one task to the next); its handoff as it was at the task's first request, as the loop fixes
   * it when the task starts.
   */
  async #contextOf(agent: string): Promise<{ task: Task; offline: OfflineContext } | null> {
    const task = await this.#options.taskOf(agent);
    if (!task) return null;
    const known = this.#contexts.get(agent);
    if (known?.task.id === task.id && known.task.claims === task.claims) return known;
    const offline: OfflineContext = {
      task: { id: task.id, subject: task.subject, description: task.description, stage: task.stage, requirePlan: task.artifacts.requirePlan === true },
      ...(task.stage ? { handoff: handoffData(task) } : {}),
    };
    const context = { task, offline };
    this.#contexts.set(agent, context);
    return context;
  }

  #refuse(res: ServerResponse, status: number, message: string): void {
    this.counts.refused++;
    this.errors.push(message);
    // Not retryable: the SDK gives up at once and the teammate reports a model error the bench sees.
    if (!res.headersSent) send(res, status, { type: 'error', error: { type: 'invalid_request_error', message } }, { 'x-should-retry': 'false' });
  }
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), 'request-id': `req_bench`, ...headers });
  res.end(text);
}

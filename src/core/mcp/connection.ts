import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { AutoteamError } from '../errors.js';
import { OWN_PACKAGE } from '../own-package.js';
import { connectionDetail } from '../model/providers/common.js';
import { redact } from '../trace/redact.js';
import { type ToolOutcome, toolError } from '../tools/tool.js';
import { type CallResult, errorOutcome, outcomeOf } from './results.js';
import { oneLine } from '../words.js';

/** A server that cannot be used: it did not start, or it stopped twice and is gone. */
export class McpUnavailableError extends AutoteamError {
  constructor(
    message: string,
    /** Why, without the sentence around it (what failed, how the server ended). */
    readonly reason: string = message,
  ) {
    super(message, 'MCP_UNAVAILABLE');
  }
}

/** A tool as the server lists it, kept to what autoteam offers the model. */
export interface McpToolInfo {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

/** What happened to the server, for the board's events. */
export type McpServerState =
  | { state: 'started'; tools: number; detail: string }
  | { state: 'failed' | 'exited' | 'gone' | 'stopped'; detail: string };

/** One start's transport, made fresh each time (a process, an HTTP session). */
export interface Opened {
  transport: Transport;
  /** How the server's process ended (stdio), for the errors the model reads. */
  describeExit?(): string;
  /** Values kept out of everything said about the server: its env's secrets, its header values. */
  secrets: readonly string[];
}

export interface ConnectionOptions {
  /** The server's name in `mcpServers`. */
  name: string;
  timeoutMs: number;
  startTimeoutMs: number;
  /** Makes the transport for a start; throws a ConfigError when the config cannot be expanded. */
  open(): Opened;
  onState?(state: McpServerState): void;
}

/** A crashed server is started again once; after the second stop it is gone. */
const MAX_STARTS = 2;
/** Pages of `tools/list` read at most (a server that keeps handing out cursors is not followed forever). */
const MAX_PAGES = 50;


/**
 * One MCP server of one teammate, through the official SDK's `Client`: started when first needed,
 * its tools listed once (the model keeps the list it was given), each call bounded by the server's
 * timeout. A server that stops (crashes, or was killed) is started again on its next use, once; after
 * that it is gone and its tools answer with a tool error saying so. Nothing here throws at a caller
 * that calls a tool: every failure is a tool result.
 */
export class McpConnection {
  private client: Client | null = null;
  private opened: Opened | null = null;
  private starting: Promise<Client> | null = null;
  private starts = 0;
  private gone: string | null = null;
  /** How the last start failed or the last process ended. */
  private lastProblem = '';
  private closed = false;
  private listed: McpToolInfo[] | null = null;

  constructor(private readonly options: ConnectionOptions) {}

  get name(): string {
    return this.options.name;
  }

  /** The server's tools as its first start listed them, starting it now if need be; throws McpUnavailableError. */
  async tools(): Promise<McpToolInfo[]> {
    if (this.listed) return this.listed;
    await this.ready();
    return this.listed ?? [];
  }

  /** Calls `tool` (the server's name for it); `shown` is the name the model knows it by. */
  async call(tool: string, shown: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<ToolOutcome> {
    const server = `the MCP server '${this.options.name}'`;
    let client: Client;
    try {
      client = await this.ready();
    } catch (error) {
      return toolError(`${shown}: ${server} ${(error as Error).message}`, 'execution_failed');
    }
    const secrets = this.opened?.secrets ?? [];
    try {
      const result = await client.callTool({ name: tool, arguments: args }, undefined, { timeout: this.options.timeoutMs, ...(signal ? { signal } : {}) });
      return outcomeOf(result as CallResult, secrets);
    } catch (error) {
      if (signal?.aborted) return toolError(`${shown} was cancelled: the work on this task stopped`, 'error');
      if (error instanceof McpError && error.code === ErrorCode.ConnectionClosed) {
        // The SDK tells the client it closed before it fails the calls in flight: lastProblem is this stop's.
        const next = this.gone ? 'it has now stopped twice and is gone: its tools no longer work' : 'it is started again on the next call';
        return toolError(redact(`${shown}: ${server} stopped during the call (${this.lastProblem}); ${next}.`, secrets), 'execution_failed');
      }
      return errorOutcome(shown, error, this.options.timeoutMs, `mcpServers.${this.options.name}.timeout`, secrets);
    }
  }

  /** Stops the server (its whole process tree); the connection cannot be used again. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const client = this.client ?? (await this.starting?.catch(() => null)) ?? null;
    this.client = null;
    if (!client) return;
    await client.close().catch(() => undefined);
    this.options.onState?.({ state: 'stopped', detail: 'stopped with its teammate' });
  }

  private ready(): Promise<Client> {
    if (this.client) return Promise.resolve(this.client);
    if (this.starting) return this.starting;
    if (this.closed) return Promise.reject(new McpUnavailableError('was stopped'));
    if (this.gone) return Promise.reject(new McpUnavailableError(`is gone (${this.gone}): its tools no longer work`));
    this.starting = this.start().finally(() => {
      this.starting = null;
    });
    return this.starting;
  }

  private async start(): Promise<Client> {
    this.starts++;
    const again = this.starts > 1;
    let opened: Opened;
    try {
      opened = this.options.open();
    } catch (error) {
      return this.startFailed((error as Error).message, []);
    }
    const client = new Client({ name: 'autoteam', version: OWN_PACKAGE.version }, { capabilities: {} });
    client.onclose = () => this.stopped(client, opened);
    let tools: McpToolInfo[];
    try {
      await client.connect(opened.transport, { timeout: this.options.startTimeoutMs });
      tools = await listTools(client, this.options.startTimeoutMs);
    } catch (error) {
      client.onclose = undefined;
      await client.close().catch(() => undefined);
      // A process that ended says more (its exit, its last line) than the closed connection it left.
      const exit = opened.describeExit?.();
      const timedOut = error instanceof McpError && error.code === ErrorCode.RequestTimeout;
      // An HTTP server that cannot be reached fails as fetch does ('fetch failed'): its cause says why.
      const message = (error as Error).message === 'fetch failed' ? `cannot connect: ${connectionDetail(error as Error)}` : startProblem((error as Error).message);
      // Ended at once with nothing said (`cat`, a script that is not a server): what it may be.
      const quiet = exit === 'exited with code 0' ? ' before it answered: is it an MCP server (one that speaks MCP on its standard input and output)?' : '';
      const why = timedOut ? `did not answer within ${this.options.startTimeoutMs / 1000} s (mcpServers.${this.options.name}.startTimeout)` : exit && exit !== 'stopped' ? `the server ${exit}${quiet}` : message;
      return this.startFailed(why, opened.secrets);
    }
    if (this.closed) {
      await client.close().catch(() => undefined);
      throw new McpUnavailableError('was stopped');
    }
    this.client = client;
    this.opened = opened;
    this.listed ??= tools;
    this.options.onState?.({ state: 'started', tools: tools.length, detail: again ? 'started again' : 'started' });
    return client;
  }

  private startFailed(why: string, secrets: readonly string[]): never {
    this.lastProblem = redact(why, secrets);
    if (this.starts >= MAX_STARTS) {
      this.gone = `it could not be started: ${this.lastProblem}`;
      this.options.onState?.({ state: 'gone', detail: this.gone });
      throw new McpUnavailableError(`is gone (${this.gone}): its tools no longer work`, this.lastProblem);
    }
    this.options.onState?.({ state: 'failed', detail: this.lastProblem });
    throw new McpUnavailableError(`did not start: ${this.lastProblem}`, this.lastProblem);
  }

  /** The client closed: by close() (nothing to say), or because the server stopped by itself. */
  private stopped(client: Client, opened: Opened): void {
    if (this.client !== client) return;
    this.client = null;
    if (this.closed) return;
    this.lastProblem = redact(opened.describeExit?.() ?? 'closed the connection', opened.secrets);
    if (this.starts >= MAX_STARTS) {
      this.gone = `it stopped twice; the last time it ${this.lastProblem}`;
      this.options.onState?.({ state: 'gone', detail: this.gone });
    } else {
      this.options.onState?.({ state: 'exited', detail: `${this.lastProblem}; it is started again on its next use` });
    }
  }
}

/** Every page of the server's tool list. */
async function listTools(client: Client, timeoutMs: number): Promise<McpToolInfo[]> {
  const tools: McpToolInfo[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const result = await client.listTools(cursor ? { cursor } : undefined, { timeout: timeoutMs });
    for (const tool of result.tools) {
      const { $schema: _, ...inputSchema } = tool.inputSchema as Record<string, unknown>;
      tools.push({ name: tool.name, description: tool.description ?? tool.title ?? '', inputSchema });
    }
    cursor = result.nextCursor;
    if (!cursor) break;
  }
  return tools;
}

/**
 * A start's error in one line: an HTTP server that is no MCP endpoint answers with its own page,
 * which the SDK puts whole in its message (a web server's HTML is a dozen lines).
 */
function startProblem(message: string): string {
  const page = message.search(/<!doctype html|<html/i);
  return oneLine(page >= 0 ? `${message.slice(0, page).trimEnd()} an HTML page, not MCP: is the URL the server's MCP endpoint?` : message, 400);
}

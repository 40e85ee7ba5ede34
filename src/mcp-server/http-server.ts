import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { randomUUID } from 'node:crypto';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest, JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';
import { AutoteamError } from '../core/errors.js';
import { readBody, RequestError } from '../web/body.js';
import { newToken, WebGuard } from '../web/guard.js';

/** The one path the server answers on. */
export const MCP_PATH = '/mcp';

/** An MCP server for one session, and how to stop it following the board. */
export interface SessionServer {
  server: McpServer;
  /** Connects `server` to a transport (board-server.ts: every message it sends redacted first). */
  connect(transport: Transport): Promise<void>;
  close(): void;
}

export interface McpHttpOptions {
  /** Makes the server of a new session: an McpServer serves one transport, so each client gets its own. */
  open: () => SessionServer;
  /** Default 127.0.0.1. */
  host?: string;
  /** 0 picks a free port. */
  port: number;
  /** Default: 32 random bytes. */
  token?: string;
  /** A session with no request for this long and no stream open is ended (default SESSION_IDLE_MS). */
  sessionIdleMs?: number;
}

/** How long a session may sit unused (no request, no GET stream open) before it is ended: a client that never sent its DELETE. */
export const SESSION_IDLE_MS = 30 * 60_000;

export interface McpHttp {
  /** The endpoint, without the token (it goes in the Authorization header). */
  url: string;
  port: number;
  token: string;
  /** Ends every session and stops listening. */
  close(): Promise<void>;
}

interface Session {
  transport: StreamableHTTPServerTransport;
  mcp: SessionServer;
  /** When its last request came, and how many of its requests are still open (a GET stream stays open). */
  lastSeen: number;
  open: number;
}

const MISSING_TOKEN = 'no token: send the header Authorization: Bearer <token> (autoteam mcp serve printed it)';
const QUERY_TOKEN = 'the token goes in the header Authorization: Bearer <token>, never in the address (addresses end up in logs)';

/**
 * The board's MCP server over streamable HTTP at `/mcp`, with the web board's rules (`WebGuard`):
 * `Host` must name this server (DNS rebinding is refused) and every request carries the token as
 * `Authorization: Bearer` — the only way an MCP client sends it; the web board's `?token=` and cookie
 * are a browser's, and a token in an address would be logged, so both are refused here. Bodies are
 * at most MAX_BODY_BYTES. Stateful, as the SDK offers it: an initialize request opens a session (its
 * id in `Mcp-Session-Id`) with its own McpServer and transport, so a client's subscriptions and
 * notifications (its GET stream) stay its own; a DELETE or `close()` ends it, and so does sitting
 * unused for `sessionIdleMs` (no request, no stream open: a client that went without its DELETE
 * would otherwise keep its server and transport for as long as the process runs).
 */
export async function startMcpHttp(options: McpHttpOptions): Promise<McpHttp> {
  const host = options.host ?? '127.0.0.1';
  const token = options.token ?? newToken();
  const sessions = new Map<string, Session>();
  let guard: WebGuard | null = null;

  const server = http.createServer((request, response) => {
    void handle(request, response).catch((error: unknown) => {
      if (response.headersSent) return void response.end();
      if (error instanceof RequestError) refuse(response, error.status, error.message, error.rpcCode);
      else refuse(response, 500, (error as Error).message ?? String(error));
    });
  });

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', 'http://localhost');
    const foreign = guard!.checkHost(request);
    if (foreign && !foreign.ok) return refuse(response, foreign.status, foreign.message);
    if (url.searchParams.has('token')) return refuse(response, 400, QUERY_TOKEN);
    const verdict = guard!.checkBearer(request, MISSING_TOKEN);
    if (!verdict.ok) return refuse(response, verdict.status, verdict.message);
    if (url.pathname !== MCP_PATH) return refuse(response, 404, `nothing at ${url.pathname}: the MCP endpoint is ${MCP_PATH}`);
    if (!['POST', 'GET', 'DELETE'].includes(request.method ?? '')) return refuse(response, 405, `${request.method} is not served at ${MCP_PATH}`);
    const id = request.headers['mcp-session-id'];
    const body = request.method === 'POST' ? await readBody(request) : undefined;
    // As over stdio: JSON that is no JSON-RPC message (`{}`, an empty batch) is an Invalid Request,
    // not the transport's parse error (nor, for `[]`, an accepted nothing).
    if (request.method === 'POST' && !isJsonRpcBody(body)) return refuse(response, 400, INVALID_REQUEST, -32600);
    if (id === undefined) {
      if (request.method === 'POST' && isInitializeRequest(body)) return open(request, response, body);
      return refuse(response, 400, 'no Mcp-Session-Id: a session starts with an initialize request');
    }
    const session = typeof id === 'string' ? sessions.get(id) : undefined;
    // 404 tells the client to start a new session (the spec's rule for an ended one).
    if (!session) return refuse(response, 404, 'no such session (it ended): start a new one', -32001);
    session.lastSeen = Date.now();
    session.open++;
    // A GET stream stays open while its client listens: keepalive finds a client gone without a word
    // (a laptop asleep), whose stream would otherwise hold its session from the sweep forever.
    if (request.method === 'GET') request.socket.setKeepAlive(true, 60_000);
    response.once('close', () => {
      session.open--;
      session.lastSeen = Date.now();
    });
    await session.transport.handleRequest(request, response, body);
  }

  async function open(request: IncomingMessage, response: ServerResponse, body: unknown): Promise<void> {
    const mcp = options.open();
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => void sessions.set(id, { transport, mcp, lastSeen: Date.now(), open: 0 }),
    });
    // Set before connect, which chains its own: a DELETE, a close() or a failed start end here.
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
      mcp.close();
    };
    await mcp.connect(transport);
    await transport.handleRequest(request, response, body);
    // An initialize the transport refused (an unsupported version) made no session: nothing keeps it.
    if (!transport.sessionId || !sessions.has(transport.sessionId)) await mcp.server.close();
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(new AutoteamError(`--http: cannot listen on ${host}:${options.port}: ${error.code === 'EADDRINUSE' ? 'the port is in use (--http 0 picks a free one)' : error.message}`, 'USAGE')),
    );
    server.listen(options.port, host, resolve);
  });
  const port = (server.address() as AddressInfo).port;
  guard = new WebGuard({ token, host, port });
  const idleMs = options.sessionIdleMs ?? SESSION_IDLE_MS;
  const sweep = setInterval(() => {
    for (const session of sessions.values()) {
      if (session.open === 0 && Date.now() - session.lastSeen >= idleMs) void session.mcp.server.close().catch(() => undefined);
    }
  }, Math.max(50, Math.min(60_000, idleMs / 4)));
  sweep.unref();
  // A wildcard bind is reached on loopback from here; a named address as itself (::1 is not 127.0.0.1).
  const shown = host === '0.0.0.0' || host === '::' || host === '[::]' ? '127.0.0.1' : host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  return {
    url: `http://${shown}:${port}${MCP_PATH}`,
    port,
    token,
    close: async () => {
      clearInterval(sweep);
      await Promise.all([...sessions.values()].map((session) => session.mcp.server.close().catch(() => undefined)));
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Stdio's words for a line that is JSON but no JSON-RPC message (mcp-serve.ts). */
export const INVALID_REQUEST = 'Invalid Request: not a JSON-RPC 2.0 message';

/** A POST body the transport can take: one JSON-RPC message, or a batch of at least one. */
function isJsonRpcBody(body: unknown): boolean {
  const one = (item: unknown) => JSONRPCMessageSchema.safeParse(item).success;
  return Array.isArray(body) ? body.length > 0 && body.every(one) : one(body);
}

/** A refusal as a JSON-RPC error, which MCP clients show as it is. */
function refuse(response: ServerResponse, status: number, message: string, code = -32000): void {
  const headers: Record<string, string> = { 'content-type': 'application/json', 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' };
  if (status === 401) headers['www-authenticate'] = 'Bearer realm="autoteam"';
  response.writeHead(status, headers);
  response.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

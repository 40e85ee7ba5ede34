/**
 * `autoteam mcp serve --http`: the built CLI as a child process, driven by the SDK's real Client over
 * StreamableHTTPClientTransport with the printed token as `Authorization: Bearer`, as Claude Code or
 * Cursor would over HTTP. With `--team --auto` (and `--dir` given before `mcp`, from another folder)
 * it lists the tools, posts a requirement, tells the subscribed task's changes on the client's own
 * stream, waits for the approval with progress, and reads `autoteam://task/1`; a second client gets a
 * session of its own, which a DELETE ends; SIGTERM ends it all with exit 0. Refused: no token, a
 * wrong one, the token in the address or in the web board's cookie, a foreign Host, a body past
 * 64 KB. A non-loopback --host is warned about. A secret of its environment never reaches a client, even
 * where a task holds it raw.
 */
import http from 'node:http';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type CallToolResult, ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileBoard } from '../../src/core/board/board.js';
import { BOARD_TOOLS } from '../../src/mcp-server/board-tools.js';
import { HANG_MS } from '../helpers/agent-wait.js';
import { CliChild } from '../helpers/cli-child.js';
import { describeRun, DOWNLOADS_REQUIREMENT, runCli, tempBoard } from '../helpers/pipeline-cli.js';

const python = spawnSync('python3', ['--version']).status === 0;

/** Starts `autoteam <args>` and reads its two lines: the endpoint, and the token in the Claude Code command. */
async function serve(args: string[], cwd: string) {
  const child = CliChild.start(args, { cwd });
  const second = await child.waitForLine((line) => line.startsWith('autoteam mcp: token'), 'the token line');
  const first = child.lines[0]!;
  const endpoint = first.slice('autoteam mcp: '.length);
  const token = /--header "Authorization: Bearer ([\w-]+)"$/.exec(second)![1]!;
  return { child, endpoint, token, port: Number(new URL(endpoint).port), first, second };
}

/** A request with any Host and headers (fetch does not let Host be set). */
function raw(port: number, options: { host: string; path?: string; method?: string; headers?: Record<string, string>; body?: string }): Promise<{ status: number; body: string; headers: http.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const request = http.request({ host: '127.0.0.1', port, path: options.path ?? '/mcp', method: options.method ?? 'POST', headers: { host: options.host, 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...options.headers } }, (response) => {
      let body = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode!, body, headers: response.headers }));
    });
    request.on('error', reject);
    request.end(options.body);
  });
}

const INITIALIZE = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });

/** The SDK's client over HTTP with the Bearer header; `streamOpen` resolves when its GET stream (where notifications come) is up. */
async function connect(endpoint: string, token: string) {
  let opened = () => undefined as void;
  const streamOpen = new Promise<void>((resolve) => (opened = resolve));
  const transport = new StreamableHTTPClientTransport(new URL(endpoint), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
    // The real fetch, watched: the transport opens its GET stream on its own after initializing.
    fetch: async (url, init) => {
      const response = await fetch(url, init);
      if ((init?.method ?? 'GET') === 'GET' && response.ok) opened();
      return response;
    },
  });
  const client = new Client({ name: 'autoteam-http-test', version: '1.0.0' });
  const updates: string[] = [];
  const waiters: Array<() => void> = [];
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
    updates.push(notification.params.uri);
    for (const wake of waiters.splice(0)) wake();
  });
  await client.connect(transport);
  const progress: string[] = [];
  return {
    client,
    transport,
    streamOpen,
    updates,
    progress,
    /** Resolves at the first resource update (a ceiling only a hang reaches). */
    firstUpdate: () =>
      new Promise<void>((resolve, reject) => {
        if (updates.length) return resolve();
        const timer = setTimeout(() => reject(new Error(`no resource update within ${HANG_MS} ms`)), HANG_MS);
        waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      }),
    call: async (name: string, args: Record<string, unknown> = {}) => {
      const result = (await client.callTool({ name, arguments: args }, undefined, { timeout: HANG_MS, onprogress: (step) => progress.push(step.message ?? ''), resetTimeoutOnProgress: true })) as CallToolResult;
      return { text: result.content.map((item) => (item.type === 'text' ? item.text : '')).join('\n'), isError: result.isError === true };
    },
  };
}

describe.runIf(python)('autoteam mcp serve --http with its team', () => {
  const root = tempBoard('autoteam-mcp-http-');
  // The server runs from another folder: the board is the --dir given before `mcp`.
  const elsewhere = tempBoard('autoteam-mcp-http-cwd-');
  let server: Awaited<ReturnType<typeof serve>>;
  let first: Awaited<ReturnType<typeof connect>>;

  beforeAll(async () => {
    server = await serve(['--dir', root, 'mcp', 'serve', '--http', '0', '--team', '--auto'], elsewhere);
  });

  afterAll(async () => {
    await first?.client.close();
    if (server?.child.running) await server.child.stop('SIGKILL');
    fs.rmSync(root, { recursive: true, force: true });
    fs.rmSync(elsewhere, { recursive: true, force: true });
  });

  it('prints its endpoint first, then the token and how a client sends it', () => {
    expect(server.first).toBe(`autoteam mcp: http://127.0.0.1:${server.port}/mcp`);
    expect(server.second).toBe(
      `autoteam mcp: token ${server.token} — clients send it as the header "Authorization: Bearer <token>"; Claude Code: claude mcp add --transport http autoteam ${server.endpoint} --header "Authorization: Bearer ${server.token}"`,
    );
    expect(server.token).toMatch(/^[\w-]{43}$/);
  });

  it("refuses what the web board refuses, and the browser's ways of sending the token", async () => {
    const host = `127.0.0.1:${server.port}`;
    const bearer = { authorization: `Bearer ${server.token}` };
    const none = await raw(server.port, { host, body: INITIALIZE });
    expect(none.status).toBe(401);
    expect(none.headers['www-authenticate']).toBe('Bearer realm="autoteam"');
    expect(JSON.parse(none.body)).toMatchObject({ jsonrpc: '2.0', error: { message: expect.stringContaining('Authorization: Bearer') } });
    expect((await raw(server.port, { host, body: INITIALIZE, headers: { authorization: 'Bearer not-the-token' } })).status).toBe(401);
    // The web board's cookie and ?token= are a browser's: refused here, the right token or not.
    expect((await raw(server.port, { host, body: INITIALIZE, headers: { cookie: `autoteam_${server.port}=${server.token}` } })).status).toBe(401);
    const query = await raw(server.port, { host, path: `/mcp?token=${server.token}`, body: INITIALIZE, headers: bearer });
    expect(query.status).toBe(400);
    expect(query.body).toContain('never in the address');
    const foreign = await raw(server.port, { host: `rebound.example:${server.port}`, body: INITIALIZE, headers: bearer });
    expect(foreign.status).toBe(403);
    expect(foreign.body).toContain("Host 'rebound.example:");
    const big = await raw(server.port, { host, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { pad: 'x'.repeat(300_000) } }), headers: bearer });
    expect(big.status).toBe(413);
    // A body that does not parse gets JSON-RPC's parse error, as over stdio.
    const garbage = await raw(server.port, { host, body: 'garbage', headers: bearer });
    expect({ status: garbage.status, body: JSON.parse(garbage.body) }).toEqual({ status: 400, body: { jsonrpc: '2.0', error: { code: -32700, message: 'the body is not JSON' }, id: null } });
    // JSON that is no JSON-RPC message: the same answer with a session (below) or without.
    expect(JSON.parse((await raw(server.port, { host, body: '{}', headers: bearer })).body).error.code).toBe(-32600);
    expect((await raw(server.port, { host, path: '/', method: 'GET', headers: bearer })).status).toBe(404);
    expect((await raw(server.port, { host, method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }), headers: bearer })).status).toBe(400);
    expect((await raw(server.port, { host, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }), headers: { ...bearer, 'mcp-session-id': 'no-such-session' } })).status).toBe(404);
    // Allowed: the same initialize with the header opens a session.
    const ok = await raw(server.port, { host: `localhost:${server.port}`, body: INITIALIZE, headers: bearer });
    expect(ok.status, ok.body).toBe(200);
    expect(ok.headers['mcp-session-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('a client lists the tools, posts, hears its subscribed task change, waits with progress and reads the task', async () => {
    first = await connect(server.endpoint, server.token);
    const { tools } = await first.client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual([...BOARD_TOOLS]);
    expect(first.client.getServerCapabilities()?.resources).toMatchObject({ subscribe: true, listChanged: true });
    await first.streamOpen;
    await first.client.subscribeResource({ uri: 'autoteam://task/1' });

    const posted = await first.call('post_requirement', { requirement: DOWNLOADS_REQUIREMENT });
    expect(posted.text, server.child.describe()).toMatch(/^Posted pipeline #1: task #1 \(requirements\) — /);
    expect(fs.existsSync(path.join(root, '.tasks', 'task_1.json'))).toBe(true);
    expect(fs.existsSync(path.join(elsewhere, '.tasks'))).toBe(false);
    await first.firstUpdate();
    expect(first.updates[0]).toBe('autoteam://task/1');

    const status = JSON.parse((await first.call('pipeline_status', { pipeline: 1, wait_seconds: 600 })).text) as { status: string };
    expect(status.status, server.child.describe()).toBe('approved');
    expect(first.progress.length).toBeGreaterThanOrEqual(1);
    const resource = await first.client.readResource({ uri: 'autoteam://task/1' });
    expect(JSON.parse((resource.contents[0] as { text: string }).text)).toMatchObject({ id: 1, status: 'completed', owner: 'analyst', stage: 'requirements' });
  });

  it('a second client gets a session of its own, which a DELETE ends', async () => {
    const second = await connect(server.endpoint, server.token);
    expect(second.transport.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(second.transport.sessionId).not.toBe(first.transport.sessionId);
    expect((await second.client.listTools()).tools).toHaveLength(BOARD_TOOLS.length);
    const id = second.transport.sessionId!;
    // Inside a session, JSON that is no JSON-RPC message is an Invalid Request, as over stdio; the session goes on.
    const inSession = { authorization: `Bearer ${server.token}`, 'mcp-session-id': id, 'mcp-protocol-version': '2025-06-18' };
    for (const body of ['{}', '[]', '[{"jsonrpc":"2.0","id":4,"method":"ping"},{"x":1}]']) {
      const invalid = await raw(server.port, { host: `127.0.0.1:${server.port}`, body, headers: inSession });
      expect({ status: invalid.status, body: JSON.parse(invalid.body) }, body).toEqual({ status: 400, body: { jsonrpc: '2.0', error: { code: -32600, message: 'Invalid Request: not a JSON-RPC 2.0 message' }, id: null } });
    }
    expect((await second.client.listTools()).tools).toHaveLength(BOARD_TOOLS.length);
    await second.transport.terminateSession();
    await second.client.close();
    const after = await raw(server.port, { host: `127.0.0.1:${server.port}`, body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/list' }), headers: { authorization: `Bearer ${server.token}`, 'mcp-session-id': id } });
    expect(after.status).toBe(404);
    // The first session is untouched.
    expect((await first.client.listTools()).tools).toHaveLength(BOARD_TOOLS.length);
  });

  it('SIGTERM closes the sessions, the team and the board, and exits 0', async () => {
    expect(await server.child.stop('SIGTERM')).toEqual({ code: 0, signal: null });
    await expect(raw(server.port, { host: `127.0.0.1:${server.port}`, body: INITIALIZE })).rejects.toThrow(/ECONNREFUSED/);
  });
});

describe('autoteam mcp serve --http: the address and the flags', () => {
  const root = tempBoard('autoteam-mcp-http-host-');
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

  it('on a non-loopback --host it warns, and still takes only its own Host and the token', async () => {
    const server = await serve(['mcp', 'serve', '--http', '0', '--host', '0.0.0.0', '--dir', root], root);
    try {
      expect(server.first).toBe(`autoteam mcp: http://127.0.0.1:${server.port}/mcp`);
      const warning = await server.child.waitForLine((line) => line.includes('warning'), 'the warning');
      expect(warning).toBe(`autoteam mcp: warning: listening on 0.0.0.0, reachable from other machines; anyone with the token can act on the board. An SSH tunnel (ssh -L ${server.port}:127.0.0.1:${server.port} <this machine>) keeps it on 127.0.0.1.`);
      expect((await raw(server.port, { host: `rebound.example:${server.port}`, body: INITIALIZE, headers: { authorization: `Bearer ${server.token}` } })).status).toBe(403);
      expect((await raw(server.port, { host: `127.0.0.1:${server.port}`, body: INITIALIZE })).status).toBe(401);
      expect((await raw(server.port, { host: `127.0.0.1:${server.port}`, body: INITIALIZE, headers: { authorization: `Bearer ${server.token}` } })).status).toBe(200);
    } finally {
      expect(await server.child.stop('SIGINT')).toEqual({ code: 0, signal: null });
    }
  });

  it('refuses --host without --http, a port that is not one, and --auto without --team', async () => {
    const alone = await runCli(['mcp', 'serve', '--host', '127.0.0.1', '--dir', root], { cwd: root });
    expect(alone.code, describeRun(alone)).toBe(2);
    expect(alone.stderr.trim()).toBe('autoteam: --host goes with --http <port> (over stdio there is no address)');
    const port = await runCli(['mcp', 'serve', '--http', 'eighty', '--dir', root], { cwd: root });
    expect(port.code, describeRun(port)).toBe(2);
    expect(port.stderr.trim()).toBe("autoteam: --http: a port is a whole number from 0 to 65535, got 'eighty'");
    // A nested command's usage errors read as every other's: the prefix, exit 2.
    const bogus = await runCli(['mcp', 'serve', '--bogus', '--dir', root], { cwd: root });
    expect(bogus.code, describeRun(bogus)).toBe(2);
    expect(bogus.stderr.trim()).toBe('autoteam: --bogus is not an option of mcp serve (autoteam mcp serve --help lists its options)');
    // --auto answers for the team --team starts: alone it would mean nothing, and is said so.
    const auto = await runCli(['mcp', 'serve', '--auto', '--dir', root], { cwd: root });
    expect(auto.code, describeRun(auto)).toBe(2);
    expect(auto.stderr.trim()).toBe('autoteam: --auto answers the questions of the team that --team starts: give --team too (without it, the team is elsewhere and its lead answers)');
  });

  it('a port in use is one line naming it, once prefixed', async () => {
    const taken = http.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const port = (taken.address() as { port: number }).port;
      const busy = await runCli(['mcp', 'serve', '--http', String(port), '--dir', root], { cwd: root });
      expect(busy.code, describeRun(busy)).toBe(2);
      expect(busy.stderr.trim()).toBe(`autoteam: --http: cannot listen on 127.0.0.1:${port}: the port is in use (--http 0 picks a free one)`);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });
});

describe('autoteam mcp serve --http and the secrets of its environment', () => {
  it('redacts them in every tool result and resource, as over stdio, even where a task holds one raw', async () => {
    const root = tempBoard('autoteam-mcp-http-secret-');
    const token = 'ghp_SECRETVALUE1234567890';
    // Posted by a process whose environment lacked the token: the task file holds it as written.
    const board = fileBoard(root);
    await board.tasks.create({ subject: `deploy with token ${token} now`, description: `use ${token}` });
    await board.close();
    expect(fs.readFileSync(path.join(root, '.tasks', 'task_1.json'), 'utf8')).toContain(token);
    const server = CliChild.start(['mcp', 'serve', '--http', '0', '--dir', root], { cwd: root, env: { GITHUB_TOKEN: token } });
    try {
      const second = await server.waitForLine((line) => line.startsWith('autoteam mcp: token'), 'the token line');
      const endpoint = server.lines[0]!.slice('autoteam mcp: '.length);
      const client = await connect(endpoint, /--header "Authorization: Bearer ([\w-]+)"$/.exec(second)![1]!);
      try {
        const said = [
          (await client.call('list_tasks')).text,
          (await client.call('get_task', { id: 1 })).text,
          JSON.stringify(await client.client.listResources()),
          JSON.stringify(await client.client.readResource({ uri: 'autoteam://task/1' })),
        ];
        for (const text of said) {
          expect(text).not.toContain(token);
          expect(text).toContain('[redacted]');
        }
      } finally {
        await client.client.close();
      }
      expect(server.lines.join('\n')).not.toContain(token);
    } finally {
      if (server.running) await server.stop('SIGKILL');
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});

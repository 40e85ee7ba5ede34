/**
 * `autoteam mcp serve --http`'s sessions: one a client left without its DELETE is ended once it has
 * sat unused for the idle time (its server and transport let go); one with its GET stream open is
 * listening, not unused, and stays.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { fileBoard } from '../../src/core/board/board.js';
import { BoardLead } from '../../src/core/lead/board-lead.js';
import { StageRegistry } from '../../src/core/stages/stage-registry.js';
import { boardServer } from '../../src/mcp-server/board-server.js';
import { startMcpHttp } from '../../src/mcp-server/http-server.js';
import { until } from '../helpers/agent-wait.js';

const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
});

describe('the MCP server over HTTP', () => {
  it('ends a session left unused for its idle time, and keeps one whose stream is open', async () => {
    const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-mcp-idle-')));
    closers.push(async () => fs.rmSync(root, { recursive: true, force: true }));
    const board = fileBoard(root);
    const lead = new BoardLead(board, { reconcileMs: 200 });
    closers.push(() => board.close(), () => lead.close());
    await lead.start();
    let opened = 0;
    let closed = 0;
    const mcp = await startMcpHttp({
      port: 0,
      sessionIdleMs: 300,
      open: () => {
        opened++;
        const made = boardServer({ controls: lead, stages: StageRegistry.from(undefined), dir: root });
        return { ...made, close: () => (closed++, made.close()) };
      },
    });
    closers.push(() => mcp.close());
    const headers = { authorization: `Bearer ${mcp.token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const initialize = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
    const start = async () => {
      const response = await fetch(mcp.url, { method: 'POST', headers, body: initialize });
      await response.text();
      return response.headers.get('mcp-session-id')!;
    };
    const ping = async (session: string) => {
      const response = await fetch(mcp.url, { method: 'POST', headers: { ...headers, 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' }, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' }) });
      await response.text();
      return response.status;
    };
    const listening = await start();
    const left = await start();
    expect(opened).toBe(2);
    // The one client keeps its notification stream open; the other goes away without a DELETE.
    const stream = await fetch(mcp.url, { headers: { ...headers, accept: 'text/event-stream', 'mcp-session-id': listening, 'mcp-protocol-version': '2025-06-18' } });
    expect(stream.status).toBe(200);
    closers.push(() => stream.body!.cancel());
    await until(() => closed === 1 || null, 'the unused session to be ended');
    expect(await ping(left)).toBe(404);
    expect(await ping(listening)).toBe(200);
    expect(closed).toBe(1);
  });
});

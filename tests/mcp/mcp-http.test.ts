/**
 * A streamable-HTTP MCP server (the official SDK's McpServer on a loopback port): the teammate's
 * toolbox reaches it from its own process with the configured headers, their `${VAR}`s expanded
 * from the environment it is given; the allow-list decides what is offered; a key the server echoes
 * is redacted before the model could read it; a server that is not there offers nothing, then is gone.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DEFAULT_SANDBOX_POLICY } from '../../src/core/exec/sandbox.js';
import type { Task } from '../../src/core/board/schemas.js';
import type { EventInput } from '../../src/core/events/schema.js';
import type { McpServerSpec } from '../../src/core/mcp/config.js';
import { McpToolbox } from '../../src/core/mcp/toolbox.js';
import type { ToolContext } from '../../src/core/tools/tool.js';
import { makeTeam } from '../helpers/agent-team.js';
import { removeBoard, tempBoard } from '../helpers/agent-wait.js';

const KEY = `docs-key-${randomUUID()}`;
let http: Server;
let url = '';
const authorizations: string[] = [];

/** Stateless: a fresh server and transport per request, as the SDK's examples serve one. */
function mcpServer(): McpServer {
  const server = new McpServer({ name: 'docs', version: '1.0.0' });
  server.registerTool('lookup', { description: 'Looks a word up.', inputSchema: { word: z.string() } }, async ({ word }) => ({
    content: [{ type: 'text', text: `${word}: a word (asked with ${KEY})` }],
  }));
  server.registerTool('other', { description: 'Not on the allow-list.' }, async () => ({ content: [{ type: 'text', text: 'other' }] }));
  return server;
}

beforeAll(async () => {
  http = createServer((req, res) => {
    authorizations.push(String(req.headers.authorization ?? ''));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    const server = mcpServer();
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    void server.connect(transport).then(() => transport.handleRequest(req, res));
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => {
    http.close(() => resolve());
    http.closeAllConnections();
  });
});

function spec(address: string): McpServerSpec {
  return { transport: 'http', url: address, headers: { Authorization: 'Bearer ${DOCS_KEY}' }, roles: ['engineer'], tools: ['lookup'], timeoutMs: 30_000, startTimeoutMs: 30_000 };
}

async function withToolbox(address: string, run: (toolbox: McpToolbox, task: Task, events: EventInput[]) => Promise<void>): Promise<void> {
  const root = tempBoard();
  const events: EventInput[] = [];
  const { board } = await makeTeam(root);
  const task = await board.create({ subject: 'Look it up', description: 'Use the docs.', role: 'engineer' });
  const toolbox = new McpToolbox({
    servers: { docs: spec(address) },
    agent: { name: 'eng', role: 'engineer' },
    rootDir: root,
    hidden: [root],
    policy: DEFAULT_SANDBOX_POLICY,
    roleStages: ['implementation'],
    env: { DOCS_KEY: KEY },
    emit: (event) => events.push(event),
  });
  try {
    await run(toolbox, task, events);
  } finally {
    await toolbox.close();
    removeBoard(root);
  }
}

describe('an http MCP server', () => {
  it('is reached with its headers expanded, offers its allow-listed tools, and its echo of the key is redacted', async () => {
    await withToolbox(url, async (toolbox, task, events) => {
      const tools = await toolbox.toolsFor('general', task);
      expect(tools.map((tool) => tool.name)).toEqual(['mcp__docs__lookup']);
      const outcome = await tools[0]!.run({ word: 'sandbox' }, { signal: new AbortController().signal } as ToolContext);
      expect(outcome).toEqual({ content: 'sandbox: a word (asked with [redacted])' });
      expect(authorizations.length).toBeGreaterThan(0);
      expect(authorizations.every((value) => value === `Bearer ${KEY}`)).toBe(true);
      expect(events).toEqual([expect.objectContaining({ type: 'mcp_server', server: 'docs', state: 'started', tools: 2, task: task.id, agent: 'eng' })]);
    });
  });

  it('that is not there offers no tools, is tried again on the next task, then is gone', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const nobody = `http://127.0.0.1:${(closed.address() as AddressInfo).port}/mcp`;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    await withToolbox(nobody, async (toolbox, task, events) => {
      expect(await toolbox.toolsFor('general', task)).toEqual([]);
      expect(await toolbox.toolsFor('general', task)).toEqual([]);
      expect(events.map((event) => (event.type === 'mcp_server' ? event.state : event.type))).toEqual(['failed', 'gone']);
      // Why, not fetch's bare 'fetch failed'.
      expect(events.map((event) => (event.type === 'mcp_server' ? event.detail : ''))).toEqual([expect.stringContaining('cannot connect: ECONNREFUSED'), expect.stringContaining('cannot connect: ECONNREFUSED')]);
      expect(JSON.stringify(events)).not.toContain(KEY);
    });
  });

  it('that is a web page, not MCP, fails in one line saying so, not with the page', async () => {
    const page = '<!DOCTYPE HTML>\n<html lang="en">\n<head><title>Error response</title></head>\n<body>\n<h1>Error response</h1>\n<p>Error code: 501</p>\n</body>\n</html>\n';
    const web = createServer((_req, res) => res.writeHead(501, { 'content-type': 'text/html' }).end(page));
    await new Promise<void>((resolve) => web.listen(0, '127.0.0.1', resolve));
    try {
      await withToolbox(`http://127.0.0.1:${(web.address() as AddressInfo).port}/`, async (toolbox, task, events) => {
        expect(await toolbox.toolsFor('general', task)).toEqual([]);
        const detail = events[0]?.type === 'mcp_server' ? events[0].detail : '';
        expect(detail).toMatch(/an HTML page, not MCP: is the URL the server's MCP endpoint\?$/);
        expect(detail).not.toMatch(/\n|<h1>|<html/i);
      });
    } finally {
      await new Promise<void>((resolve) => web.close(() => resolve()));
    }
  });
});

/**
 * An engineer in this thread using an MCP server of autoteam.config.json: a tiny fixture server
 * (tests/fixtures/mcp, the official SDK) started inside the sandbox when the task's tool list is
 * built, its tools offered as `mcp__fixture__<tool>` beside the general ones. Errors, a hang, and a
 * crash are tool results of the event stream's kinds: the crash restarts the server once, the
 * second leaves it gone. Other roles and stages are not offered it; a server that cannot start
 * offers nothing.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { fileBoard } from '../../src/core/board/board.js';
import type { TeamEvent } from '../../src/core/events/schema.js';
import { CODE_NICENESS, containment } from '../../src/core/exec/sandbox.js';
import type { McpServerSpec } from '../../src/core/mcp/config.js';
import type { ModelMessage, ToolSpec } from '../../src/core/model/types.js';
import { makeTeam, startLocalTeammate, type LocalTeammate } from '../helpers/agent-team.js';
import { removeBoard, tempBoard, until } from '../helpers/agent-wait.js';
import { FakeModel, reply, toolUse } from '../helpers/fake-model.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const FIXTURE = path.resolve(here, '..', 'fixtures', 'mcp', 'misbehaving-server.mjs');
const TOOLS = ['echo', 'crash', 'hang', 'fail', 'throw', 'probe', 'mixed'].map((tool) => `mcp__fixture__${tool}`);
/** A value the server gets through `${MCP_TEST_VALUE}`: not secret by its own name, secret by the server's. */
const TOKEN = `tok-${randomUUID()}`;
const CANARY = `canary-${randomUUID()}`;

/** The fixture as a stdio server of the engineer; `marker` tells its processes apart from any other's. */
function fixture(marker: string, extra: Partial<McpServerSpec> = {}, args: string[] = []): McpServerSpec {
  return { transport: 'stdio', command: process.execPath, args: [FIXTURE, ...args, `--marker=${marker}`], env: { SERVICE_TOKEN: '${MCP_TEST_VALUE}' }, roles: ['engineer'], timeoutMs: 1_500, startTimeoutMs: 60_000, ...extra } as McpServerSpec;
}

/** Processes (any PID namespace) whose command line holds `marker`. */
function processesWith(marker: string): number[] {
  return fs.readdirSync('/proc').filter((entry) => {
    if (!/^\d+$/.test(entry)) return false;
    try {
      return fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(marker);
    } catch {
      return false;
    }
  }).map(Number);
}

/** The tool results the model read, in order, from the conversation of the last call. */
function results(messages: readonly ModelMessage[]): Array<{ content: string; is_error?: boolean }> {
  return messages.flatMap((message) => (typeof message.content === 'string' ? [] : message.content.flatMap((block) => (block.type === 'tool_result' ? [{ content: block.content, ...(block.is_error ? { is_error: true } : {}) }] : []))));
}

async function boardEvents(root: string): Promise<TeamEvent[]> {
  const board = fileBoard(root);
  try {
    return await board.log.read();
  } finally {
    await board.close();
  }
}

describe('an MCP server of the engineer, in the sandbox', () => {
  let root = '';
  let running: LocalTeammate | null = null;
  afterEach(async () => {
    await running?.halt();
    running = null;
    delete process.env.MCP_TEST_VALUE;
    delete process.env.MCP_TEST_CANARY;
    removeBoard(root);
  });

  it('offers its tools with their schemas; errors, a hang and crashes are tool results; a second crash leaves it gone', async () => {
    root = tempBoard();
    process.env.MCP_TEST_VALUE = TOKEN;
    process.env.MCP_TEST_CANARY = CANARY;
    const marker = randomUUID();
    const { board } = await makeTeam(root);
    await board.create({ subject: 'Use the fixture', description: 'Call its tools.', role: 'engineer' });
    let offered: ToolSpec[] = [];
    const model = new FakeModel([
      (_call, request) => {
        offered = request.tools;
        return reply(toolUse('mcp__fixture__probe', { path: path.join(root, '.tasks') }), toolUse('mcp__fixture__echo', { text: 'hi' }));
      },
      reply(toolUse('mcp__fixture__fail', {}), toolUse('mcp__fixture__throw', {}), toolUse('mcp__fixture__mixed', {})),
      reply(toolUse('mcp__fixture__hang', {}), toolUse('mcp__fixture__echo', { text: 'after the hang' })),
      reply(toolUse('mcp__fixture__crash', {}), toolUse('mcp__fixture__echo', { text: 'restarted' })),
      reply(toolUse('mcp__fixture__crash', {}), toolUse('mcp__fixture__echo', { text: 'gone?' })),
      reply(toolUse('complete_task', { result: 'used the fixture' })),
    ]);
    running = startLocalTeammate({ root, name: 'eng', role: 'engineer', model, settings: { mcpServers: { fixture: fixture(marker) } } });
    await until(() => board.get(1).status === 'completed', 'the task completed');
    await running.halt();
    model.assertDone();

    // Offered beside the general tools, each with the server's own input schema.
    expect(model.requests[0]!.tools.filter((name) => name.startsWith('mcp__')).sort()).toEqual([...TOOLS].sort());
    expect(model.requests[0]!.tools).toContain('complete_task');
    const echo = offered.find((tool) => tool.name === 'mcp__fixture__echo')!;
    expect(echo.input_schema).toMatchObject({ type: 'object', properties: { text: { type: 'string' } }, required: ['text'] });
    expect(echo.description).toContain("MCP server 'fixture'");

    const read = results(model.requests.at(-1)!.messages);
    const [probe, hi, fail, thrown, mixed, hang, afterHang, crash1, restarted, crash2, gone] = read;
    const seen = JSON.parse(probe!.content) as { pid: number; cwd: string; env: Record<string, string>; exists: boolean };
    // Its own folder, a private HOME, nothing of the person's environment but the allow-list and its own variable
    // (PWD: the shell that puts it in its pids cgroup).
    expect(seen.cwd).toBe(path.join(root, 'workspace', 'mcp', 'eng', 'fixture'));
    expect(seen.env.HOME).toBe(path.join(seen.cwd, '.home'));
    expect(seen.env.SERVICE_TOKEN).toBe('[redacted]');
    expect(probe!.content).not.toContain(TOKEN);
    expect(probe!.content).not.toContain(CANARY);
    expect(Object.keys(seen.env).filter((name) => !/^(PATH|LANG|LANGUAGE|LC_\w+|TERM|TZ|COLUMNS|LINES|HOME|TMPDIR|PYTHONDONTWRITEBYTECODE|PWD|AUTOTEAM_RUN|AUTOTEAM_OWNER|SERVICE_TOKEN)$/.test(name))).toEqual([]);
    if (containment().kind === 'bwrap') {
      // bubblewrap: a PID namespace of its own, and the board out of sight.
      expect(seen.pid).toBeLessThanOrEqual(3);
      expect(seen.exists).toBe(false);
    }
    expect(hi).toEqual({ content: 'echo: hi' });
    expect(fail).toEqual({ content: 'the thing failed: no such record', is_error: true });
    expect(thrown).toEqual({ content: expect.stringContaining('boom inside the tool'), is_error: true });
    expect(mixed!.content.split('\n')).toEqual([
      'three things:',
      '[image: image/png, 2.9 KB — not shown]',
      '[resource: file:///notes.txt (text/plain, 2.0 KB) — not shown]',
      '[resource link: file:///report.pdf (report)]',
      'structured content: {"count":3}',
    ]);
    expect(hang).toEqual({ content: expect.stringMatching(/^mcp__fixture__hang timed out after 1\.5 s \(mcpServers\.fixture\.timeout\)/), is_error: true });
    expect(afterHang).toEqual({ content: 'echo: after the hang' });
    expect(crash1).toEqual({ content: expect.stringContaining("the MCP server 'fixture' stopped during the call (exited with code 3: crashing on purpose); it is started again on the next call"), is_error: true });
    expect(restarted).toEqual({ content: 'echo: restarted' });
    expect(crash2).toEqual({ content: expect.stringContaining('it has now stopped twice and is gone'), is_error: true });
    expect(gone).toEqual({ content: expect.stringContaining("the MCP server 'fixture' is gone (it stopped twice"), is_error: true });

    const events = await boardEvents(root);
    const calls = events.filter((event): event is Extract<TeamEvent, { type: 'tool_call' }> => event.type === 'tool_call' && event.tool.startsWith('mcp__'));
    expect(calls.map((event) => `${event.tool.slice('mcp__fixture__'.length)}:${event.outcome}`)).toEqual([
      'probe:ok',
      'echo:ok',
      'fail:error',
      'throw:error',
      'mixed:ok',
      'hang:timeout',
      'echo:ok',
      'crash:execution_failed',
      'echo:ok',
      'crash:execution_failed',
      'echo:execution_failed',
    ]);
    const servers = events.filter((event): event is Extract<TeamEvent, { type: 'mcp_server' }> => event.type === 'mcp_server');
    expect(servers.map((event) => event.state)).toEqual(['started', 'exited', 'started', 'gone']);
    expect(servers[0]).toMatchObject({ agent: 'eng', role: 'engineer', server: 'fixture', task: 1, tools: 7 });
    expect(JSON.stringify(events)).not.toContain(TOKEN);
    expect(processesWith(marker)).toEqual([]);
  });

  it('stops the server, its whole tree, when the teammate stops', async () => {
    root = tempBoard();
    const marker = randomUUID();
    const { board } = await makeTeam(root);
    await board.create({ subject: 'Echo once', description: 'Call echo.', role: 'engineer' });
    const model = new FakeModel([reply(toolUse('mcp__fixture__echo', { text: 'once' })), reply(toolUse('complete_task', { result: 'echoed' }))]);
    running = startLocalTeammate({ root, name: 'eng', role: 'engineer', model, settings: { mcpServers: { fixture: fixture(marker, { env: {} }) } } });
    await until(() => board.get(1).status === 'completed', 'the task completed');
    // Idle, with the server still running for its next task.
    expect(processesWith(marker).length).toBeGreaterThan(0);
    // Its session runs below the runtime's, as the code's does (where the kernel has autogroups).
    if (fs.existsSync('/proc/self/autogroup')) {
      const lowered = (pid: number) => fs.readFileSync(`/proc/${pid}/autogroup`, 'utf8').trim().endsWith(`nice ${CODE_NICENESS}`);
      await until(() => processesWith(marker).every(lowered), `the server's session at niceness ${CODE_NICENESS}`);
    }
    await running.halt();
    expect(processesWith(marker)).toEqual([]);
    const states = (await boardEvents(root)).flatMap((event) => (event.type === 'mcp_server' ? [event.state] : []));
    expect(states).toEqual(['started', 'stopped']);
  });

  it('is offered only to its roles and stages: another role, or a stage not listed, starts nothing', async () => {
    root = tempBoard();
    const marker = randomUUID();
    const { board } = await makeTeam(root);
    await board.create({ subject: 'Analyse', description: 'General work.', role: 'analyst' });
    await board.create({ subject: 'Engineer', description: 'General work.', role: 'engineer' });
    const servers = { fixture: fixture(marker, { stages: ['implementation'] }) };
    const analystModel = new FakeModel([reply(toolUse('complete_task', { result: 'analysed' }))]);
    running = startLocalTeammate({ root, name: 'ana', role: 'analyst', model: analystModel, settings: { mcpServers: servers } });
    await until(() => board.get(1).status === 'completed', 'the analyst task completed');
    await running.halt();
    const engineerModel = new FakeModel([reply(toolUse('complete_task', { result: 'engineered' }))]);
    running = startLocalTeammate({ root, name: 'eng', role: 'engineer', model: engineerModel, settings: { mcpServers: servers } });
    await until(() => board.get(2).status === 'completed', 'the engineer task completed');
    await running.halt();
    for (const call of [...analystModel.requests, ...engineerModel.requests]) expect(call.tools.filter((name) => name.startsWith('mcp__'))).toEqual([]);
    expect((await boardEvents(root)).filter((event) => event.type === 'mcp_server')).toEqual([]);
  });

  it('a server that does not start offers no tools, is tried once more on the next task, then is gone', async () => {
    root = tempBoard();
    const marker = randomUUID();
    const { board } = await makeTeam(root);
    await board.create({ subject: 'First', description: 'General work.', role: 'engineer' });
    const model = new FakeModel([reply(toolUse('complete_task', { result: 'first' })), reply(toolUse('complete_task', { result: 'second' }))]);
    running = startLocalTeammate({ root, name: 'eng', role: 'engineer', model, settings: { mcpServers: { fixture: fixture(marker, { env: {} }, ['exit-at-start']) } } });
    await until(() => board.get(1).status === 'completed', 'the first task completed');
    await board.create({ subject: 'Second', description: 'General work.', role: 'engineer' });
    running.wake.notify();
    await until(() => board.get(2).status === 'completed', 'the second task completed');
    await running.halt();
    model.assertDone();
    for (const call of model.requests) expect(call.tools.filter((name) => name.startsWith('mcp__'))).toEqual([]);
    const servers = (await boardEvents(root)).filter((event): event is Extract<TeamEvent, { type: 'mcp_server' }> => event.type === 'mcp_server');
    expect(servers.map((event) => [event.state, event.task])).toEqual([
      ['failed', 1],
      ['gone', 2],
    ]);
    expect(servers[0]!.detail).toContain('cannot start: no configuration');
  });
});

/**
 * A real published MCP server (@modelcontextprotocol/server-everything) in a whole `autoteam run`
 * through the loopback Messages API: configured in autoteam.config.json for the engineer only, with
 * an allow-list, it is started inside the engineer's sandbox when its task's tools are built; the
 * engineer's requests offer its tools with the server's schemas and the analyst's, the reviewer's
 * and the simulated user's never do; what it returns (text, an image, structured content, its own
 * environment) comes back as tool results; and `autoteam mcp list` says what starts and who gets what.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TeamEvent } from '../../src/core/events/schema.js';
import { MessagesServer, messageBody, type RecordedRequest, toolUseBlock } from '../helpers/messages-server.js';
import { type CliResult, DOWNLOADS_REQUIREMENT, describeRun, repoRoot, runCli, tempBoard, walk } from '../helpers/pipeline-cli.js';
import { playerOf, TeamPlayer } from '../helpers/pipeline-roles.js';

const KEY = `test-key-${randomBytes(8).toString('hex')}`;
const TOKEN = `svc-${randomBytes(8).toString('hex')}`;
const CANARY = `canary-${randomBytes(8).toString('hex')}`;
const python = spawnSync('python3', ['--version']).status === 0;
const EVERYTHING = path.join(repoRoot, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
const ALLOWED = ['echo', 'get-sum', 'get-env', 'get-tiny-image', 'get-structured-content'];
const OFFERED = ALLOWED.map((tool) => `mcp__everything__${tool}`);

function everything(extra: Record<string, unknown> = {}) {
  return { command: process.execPath, args: [EVERYTHING, 'stdio'], env: { SERVICE_TOKEN: '${MCP_E2E_VALUE}' }, roles: ['engineer'], tools: ALLOWED, ...extra };
}

type Message = { role: string; content: string | Array<Record<string, any>> };
const toolTurns = (messages: Message[]) => messages.filter((m) => m.role === 'assistant' && Array.isArray(m.content) && m.content.some((b) => b.type === 'tool_use')).length;
const offered = (request: RecordedRequest) => ((request.body.tools ?? []) as Array<{ name: string }>).map((tool) => tool.name);

describe.runIf(python)('autoteam run with an MCP server for the engineer', () => {
  let server: MessagesServer;
  const player = new TeamPlayer();
  let root = '';
  let run: CliResult;
  let events: TeamEvent[] = [];

  beforeAll(async () => {
    const team = player.steps();
    // The engineer's third turn (after write_file and its bash check) uses the server; every other turn is the team's.
    const steps = team.map((step) => (request: RecordedRequest, context: Parameters<Exclude<typeof step, { body: unknown }>>[1]) => {
      if (playerOf(request) !== 'engineer' || toolTurns(request.body.messages) !== 2) return (step as Exclude<typeof step, { body: unknown }>)(request, context);
      const reply = [
        toolUseBlock('mcp__everything__echo', { message: 'hello from the engineer' }),
        toolUseBlock('mcp__everything__get-sum', { a: 2, b: 3 }),
        toolUseBlock('mcp__everything__get-env', {}),
        toolUseBlock('mcp__everything__get-tiny-image', {}),
        toolUseBlock('mcp__everything__get-structured-content', { location: 'Chicago' }),
      ];
      player.turns.push({ player: 'engineer', request, reply });
      return { status: 200, body: messageBody(reply) };
    });
    server = await MessagesServer.start(steps);
    root = tempBoard();
    fs.writeFileSync(path.join(root, 'autoteam.config.json'), JSON.stringify({ mcpServers: { everything: everything() } }));
    run = await runCli(['run', '--auto', '--timeout', '150s', '--dir', root, DOWNLOADS_REQUIREMENT], {
      cwd: root,
      env: { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: server.url, MCP_E2E_VALUE: TOKEN, PERSON_CANARY: CANARY },
    });
    const log = path.join(root, '.team', 'events.jsonl');
    events = fs.existsSync(log) ? fs.readFileSync(log, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as TeamEvent) : [];
  });

  afterAll(async () => {
    await server?.close();
    if (root) fs.rmSync(root, { recursive: true, force: true });
  });

  it('approves the pipeline, and the server saw nothing unexpected', () => {
    expect(server.errors).toEqual([]);
    expect(run.code, describeRun(run)).toBe(0);
    expect(run.stdout).toMatch(/pipeline #1: APPROVED/);
  });

  it("offers the server's allow-listed tools to the engineer only, with the server's schemas", () => {
    for (const turn of player.turns) {
      const names = offered(turn.request).filter((name) => name.startsWith('mcp__'));
      expect(names.sort(), `${turn.player}'s request`).toEqual(turn.player === 'engineer' ? [...OFFERED].sort() : []);
    }
    expect(player.of('analyst').length).toBeGreaterThan(0);
    expect(player.of('reviewer').length).toBeGreaterThan(0);
    const sum = (player.of('engineer')[0]!.request.body.tools as Array<{ name: string; input_schema: any }>).find((tool) => tool.name === 'mcp__everything__get-sum')!;
    expect(sum.input_schema).toMatchObject({ type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] });
    expect(sum.input_schema.$schema).toBeUndefined();
  });

  it('hands back what the server returned: text, a sum, its environment, an image as a note, structured content', () => {
    const after = player.of('engineer').find((turn) => toolTurns(turn.request.body.messages) === 3)!;
    const results = (after.request.body.messages.at(-1).content as Array<{ type: string; content: string; is_error?: boolean }>).filter((block) => block.type === 'tool_result');
    const [echo, sum, env, image, structured] = results;
    for (const result of results) expect(result.is_error, result.content).toBeUndefined();
    expect(echo!.content).toBe('Echo: hello from the engineer');
    expect(sum!.content).toContain('5');
    const seen = JSON.parse(env!.content) as Record<string, string>;
    // Its own folder's HOME, its one variable (redacted), nothing else of the person's environment.
    expect(seen.HOME).toBe(path.join(root, 'workspace', 'mcp', 'engineer', 'everything', '.home'));
    expect(seen.SERVICE_TOKEN).toBe('[redacted]');
    expect(seen.PERSON_CANARY).toBeUndefined();
    expect(Object.keys(seen).filter((name) => /ANTHROPIC|MCP_E2E/.test(name))).toEqual([]);
    expect(image!.content).toMatch(/\[image: image\/png, [\d.]+ (B|KB) — not shown\]/);
    expect(JSON.parse(structured!.content)).toMatchObject({ conditions: expect.any(String) });
  });

  it('records the server in the event log: started for the engineer, stopped with it, its calls ok', () => {
    const states = events.flatMap((event) => (event.type === 'mcp_server' ? [`${event.agent}:${event.state}`] : []));
    expect(states).toEqual(['engineer:started', 'engineer:stopped']);
    const calls = events.flatMap((event) => (event.type === 'tool_call' && event.tool.startsWith('mcp__') ? [`${event.tool}:${event.outcome}`] : []));
    expect(calls).toEqual(OFFERED.map((name) => `${name}:ok`));
  });

  it('keeps the key and the server token out of the board, the trace, the workspace and the output', () => {
    for (const file of walk(root)) {
      const text = fs.readFileSync(file, 'latin1');
      expect(text.includes(KEY), file).toBe(false);
      expect(text.includes(TOKEN), file).toBe(false);
    }
    expect(run.stdout + run.stderr).not.toContain(KEY);
    expect(server.requests.some((request) => request.rawBody.includes(TOKEN))).toBe(false);
  });
});

/** `  engineer: a, b` → the role and its tools, sorted (the server lists them in its own order). */
function perRole(line: string): [string, string[]] {
  const [role, tools] = line.trim().split(': ');
  return [role!, tools!.split(', ').sort()];
}

describe('autoteam mcp list', () => {
  const roots: string[] = [];
  afterAll(() => {
    for (const dir of roots) fs.rmSync(dir, { recursive: true, force: true });
  });

  function board(servers: Record<string, unknown>): string {
    const dir = tempBoard('autoteam-mcp-list-');
    roots.push(dir);
    fs.writeFileSync(path.join(dir, 'autoteam.config.json'), JSON.stringify({ mcpServers: servers }));
    return dir;
  }

  it('starts each server as a teammate would and prints its tools per role; exit 0', async () => {
    const dir = board({ everything: everything({ roles: ['engineer', 'reviewer'], stages: ['implementation', 'review'] }) });
    const result = await runCli(['mcp', 'list', '--dir', dir], { cwd: dir, env: { MCP_E2E_VALUE: TOKEN } });
    expect(result.code, describeRun(result)).toBe(0);
    const lines = result.stdout.trim().split('\n');
    expect(lines[0]).toBe(`everything (stdio: ${process.execPath} ${EVERYTHING} stdio)`);
    expect(lines[1]).toBe('  offered to: engineer, reviewer (stages: implementation, review)');
    expect(lines[2]).toMatch(/^ {2}starts: yes, \d+ tools \(sandbox: the role's, network off\)$/);
    expect(lines.slice(3).map(perRole)).toEqual([
      ['engineer', [...OFFERED].sort()],
      ['reviewer', [...OFFERED].sort()],
    ]);
    expect(result.stdout).not.toContain(TOKEN);
  });

  it('says which server does not start and why, and exits 1; --role shows only what that role gets', async () => {
    const dir = board({ everything: everything(), broken: { command: 'no-such-mcp-server', roles: ['engineer'] }, unset: { command: 'x', env: { K: '${MCP_UNSET_VARIABLE}' }, roles: ['analyst'] }, quiet: { command: 'true', roles: ['analyst'] } });
    const all = await runCli(['mcp', 'list', '--dir', dir], { cwd: dir, env: { MCP_E2E_VALUE: TOKEN } });
    expect(all.code, describeRun(all)).toBe(1);
    expect(all.stdout).toMatch(/^broken \(stdio: no-such-mcp-server\)\n {2}offered to: engineer \(every stage of the role, and general tasks\)\n {2}starts: no — the server exited with code 127: .*no-such-mcp-server/m);
    expect(all.stdout).toContain('unset (stdio: x)\n  offered to: analyst (every stage of the role, and general tasks)\n  starts: no — mcpServers.unset.env.K: ${MCP_UNSET_VARIABLE} is not set in the environment');
    // A program that ends at once, saying nothing, is perhaps no MCP server at all.
    expect(all.stdout).toContain('quiet (stdio: true)\n  offered to: analyst (every stage of the role, and general tasks)\n  starts: no — the server exited with code 0 before it answered: is it an MCP server (one that speaks MCP on its standard input and output)?');
    const reviewer = await runCli(['mcp', 'list', '--role', 'reviewer', '--dir', dir], { cwd: dir });
    expect(reviewer.code, describeRun(reviewer)).toBe(0);
    expect(reviewer.stdout.trim()).toBe('no MCP server is offered to reviewer');
    const engineer = await runCli(['mcp', 'list', '--role', 'engineer', '--dir', dir], { cwd: dir, env: { MCP_E2E_VALUE: TOKEN } });
    expect(engineer.stdout.split('\n').filter((line) => line.startsWith('  engineer: ')).map(perRole)).toEqual([['engineer', [...OFFERED].sort()]]);
    expect(engineer.stdout).not.toContain('unset');
  });

  it('says where servers would go: the config file, or that there is none', async () => {
    const empty = tempBoard('autoteam-mcp-none-');
    roots.push(empty);
    const none = await runCli(['mcp', 'list', '--dir', empty], { cwd: empty });
    expect(none.code, describeRun(none)).toBe(0);
    expect(none.stdout.trim()).toBe(`no MCP servers: there is no ${path.join(empty, 'autoteam.config.json')} (give them in its mcpServers)`);
    const dir = board({});
    const listed = await runCli(['mcp', 'list', '--dir', dir], { cwd: dir });
    expect(listed.stdout.trim()).toBe(`no MCP servers in ${path.join(dir, 'autoteam.config.json')} (mcpServers)`);
  });

  it('refuses a role no stage has, with exit 2', async () => {
    const dir = board({ everything: everything() });
    const result = await runCli(['mcp', 'list', '--role', 'astronaut', '--dir', dir], { cwd: dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/unknown role 'astronaut'/);
  });
});

describe.runIf(python)('autoteam run with an MCP server that does not start', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('still finishes the pipeline, and says under the summary (and in --json) which server failed and why', async () => {
    const root = tempBoard();
    const tools = tempBoard();
    dirs.push(root, tools);
    const script = path.join(tools, 'crash.mjs');
    fs.writeFileSync(script, "throw new Error('the database is not there');\n");
    fs.writeFileSync(path.join(root, 'autoteam.config.json'), JSON.stringify({ mcpServers: { db: { command: process.execPath, args: [script], roles: ['engineer'] } } }));
    const run = await runCli(['run', '--auto', '--dir', root, 'Write a Python script that counts the words in a text file.'], { cwd: root });
    expect(run.code, describeRun(run)).toBe(0);
    const lines = run.stdout.trimEnd().split('\n');
    const notes = lines.filter((line) => line.startsWith('note: MCP server'));
    expect(notes, describeRun(run)).toEqual([expect.stringMatching(/^note: MCP server db of engineer (failed|gone): .*Error: the database is not there/)]);
    // Under the summary: after its last line.
    expect(lines.indexOf(notes[0]!)).toBeGreaterThan(lines.findIndex((line) => line.startsWith('tokens: ')));

    // The JSON summary says it too, as data.
    const json = await runCli(['run', '--auto', '--json', '--dir', root, 'Write a Python script that counts the words in a text file.'], { cwd: root });
    expect(json.code, describeRun(json)).toBe(0);
    const summary = JSON.parse(json.stdout) as { status: string; mcp?: unknown };
    expect(summary.status).toBe('approved');
    expect(summary.mcp).toEqual([{ server: 'db', agent: 'engineer', state: expect.stringMatching(/^(failed|gone)$/), detail: expect.stringMatching(/Error: the database is not there/) }]);
  });
});

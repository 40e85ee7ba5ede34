/**
 * `autoteam run --auto` through the real SDK path: the built CLI with ANTHROPIC_API_KEY and
 * ANTHROPIC_BASE_URL pointing at a loopback Messages API server whose step plays every role.
 * What the requests carry is the contract: gated tools, identity first, the handoff, tool_result
 * pairing, and a key that travels only in its header.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Task } from '../../src/core/board/schemas.js';
import { COORDINATION_TOOL_NAMES, STAGE_DEFINITIONS } from '../../src/core/stages/definitions.js';
import { MessagesServer } from '../helpers/messages-server.js';
import { type CliResult, DOWNLOADS_REQUIREMENT, describeRun, readTasks, runCli, tempBoard, walk } from '../helpers/pipeline-cli.js';
import { CLEAN_ORGANIZER, PLAYER_STAGE, TeamPlayer, USER_ANSWER, type PlayedTurn } from '../helpers/pipeline-roles.js';

const KEY = `test-key-${randomBytes(8).toString('hex')}`;
const python = spawnSync('python3', ['--version']).status === 0;
const SIGNALS = new Set(Object.values(STAGE_DEFINITIONS).flatMap((stage) => Object.keys(stage.transitions)));

describe.runIf(python)('autoteam run --auto against a loopback Messages API', () => {
  let server: MessagesServer;
  const player = new TeamPlayer();
  let root = '';
  let run: CliResult;
  let tasks: Task[] = [];

  beforeAll(async () => {
    server = await MessagesServer.start(player.steps());
    root = tempBoard();
    // The run's own timeout is a hang's ceiling, under the kill at KILL_AFTER_MS: three suites at once
    // on two cores took this pipeline past 40 s.
    run = await runCli(['run', '--auto', '--timeout', '150s', '--dir', root, DOWNLOADS_REQUIREMENT], {
      cwd: root,
      env: { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: server.url },
    });
    tasks = fs.existsSync(path.join(root, '.tasks')) ? readTasks(root) : [];
  });

  afterAll(async () => {
    await server?.close();
    if (root) fs.rmSync(root, { recursive: true, force: true });
  });

  it('exits 0 with the pipeline approved, and the server saw nothing unexpected', () => {
    expect(server.errors).toEqual([]);
    expect(run.code, describeRun(run)).toBe(0);
    expect(run.stdout).toMatch(/pipeline #1: APPROVED/);
    expect(tasks.map((task) => `${task.stage}/${task.revision}/${task.owner}/${task.status}`)).toEqual([
      'requirements/0/analyst/completed',
      'implementation/0/engineer/completed',
      'review/0/reviewer/completed',
    ]);
    expect(tasks[2]!.artifacts.verdict).toBe('approved');
    expect(fs.readFileSync(path.join(root, 'workspace', '1', 'organize.py'), 'utf8')).toBe(CLEAN_ORGANIZER);
    // A priced model (the default Sonnet): the summary shows dollars beside the tokens.
    expect(run.stdout).toMatch(/^tokens: [\d,]+ in \/ [\d,]+ out.* · \$\d+\.\d+ · wall time/m);
  });

  it('made the expected calls: 3 analyst, 1 simulated user, 3 engineer, 2 reviewer', () => {
    expect(server.requests.every((request) => request.method === 'POST' && request.path === '/v1/messages')).toBe(true);
    const counts = Object.fromEntries(['analyst', 'user', 'engineer', 'reviewer'].map((p) => [p, player.of(p as never).length]));
    expect(counts).toEqual({ analyst: 3, user: 1, engineer: 3, reviewer: 2 });
  });

  it('offers each stage exactly its tools plus the coordination tools, never another stage\'s', () => {
    for (const turn of player.turns) {
      const offered = ((turn.request.body.tools ?? []) as Array<{ name: string }>).map((tool) => tool.name);
      if (turn.player === 'user') {
        expect(offered, 'the simulated user is offered no tools').toEqual([]);
        continue;
      }
      const stage = STAGE_DEFINITIONS[PLAYER_STAGE[turn.player]];
      expect(offered.sort()).toEqual([...stage.tools, ...COORDINATION_TOOL_NAMES].sort());
      const others = Object.values(STAGE_DEFINITIONS)
        .filter((other) => other.stage !== stage.stage)
        .flatMap((other) => other.tools)
        .filter((tool) => !stage.tools.includes(tool));
      for (const tool of others) expect(offered).not.toContain(tool);
      expect(turn.request.body.system[0].text).toContain(stage.systemPrompt);
    }
  });

  it('opens every stage conversation with the identity block and an assistant acknowledgement', () => {
    const team = path.basename(root);
    for (const turn of player.turns.filter((t) => t.player !== 'user')) {
      const [identity, ack, task] = turn.request.body.messages as Array<{ role: string; content: unknown }>;
      expect(identity).toEqual({ role: 'user', content: `<identity>You are '${turn.player}', role: ${turn.player}, team: ${team}. Continue your work.</identity>` });
      expect(ack!.role).toBe('assistant');
      expect(String(ack!.content)).toContain(turn.player);
      expect(task!.role).toBe('user');
      expect(String(task!.content)).toMatch(/^Task #\d+ \[/);
    }
  });

  it('starts the engineer with a handoff holding every saved requirement, and the reviewer with the file', () => {
    const requirements = tasks[0]!.artifacts.requirements ?? {};
    expect(requirements).toEqual({ language: 'Python 3, standard library only', folder: USER_ANSWER });
    const engineerTask = String(player.of('engineer')[0]!.request.body.messages[2].content);
    expect(engineerTask).toContain('<handoff>');
    expect(engineerTask).toContain(`Original requirement: ${DOWNLOADS_REQUIREMENT}`);
    for (const [key, value] of Object.entries(requirements)) expect(engineerTask).toContain(`- ${key}: ${value}`);
    expect(engineerTask).toContain(`Q: Which folder should it organize by default?\nA: ${USER_ANSWER}`);
    const reviewerTask = String(player.of('reviewer')[0]!.request.body.messages[2].content);
    expect(reviewerTask).toContain('Submitted file: organize.py (revision 0');
    expect(reviewerTask).toContain(CLEAN_ORGANIZER.trimEnd());
    for (const [key, value] of Object.entries(requirements)) expect(reviewerTask).toContain(`- ${key}: ${value}`);
    // The criterion the analyst recorded reaches both, and the approval rests on the reviewer's check.
    const criterion = '- [AC1] Each file is moved into a folder named after its type (verify: organize a scratch folder with a.jpg and b.pdf)';
    expect(engineerTask).toContain(criterion);
    expect(reviewerTask).toContain(criterion);
    expect(tasks[2]!.artifacts.checks).toEqual([expect.objectContaining({ id: 'CHK1', ok: true, exitCode: 0, output: expect.stringContaining('sorted by type') })]);
    expect(tasks[2]!.artifacts.criteriaVerdicts).toEqual([{ id: 'AC1', met: true, evidence: expect.stringContaining('CHK1 passed') }]);
  });

  it('gives the simulated user the original requirement and the analyst\'s question', () => {
    const [ask] = player.of('user');
    const text = JSON.stringify(ask!.request.body.messages);
    expect(text).toContain(DOWNLOADS_REQUIREMENT);
    expect(text).toContain('Which folder should it organize by default?');
  });

  it('answers every tool_use with a tool_result of the same id in the next request\'s last user message', () => {
    const byConversation = (turn: PlayedTurn) => turn.request.body.messages.length;
    for (const turn of player.turns) {
      const uses = turn.reply.filter((block) => block.type === 'tool_use') as Array<{ id: string; name: string }>;
      if (uses.length === 0) continue;
      const next = player.turns.find(
        (later) =>
          later.player === turn.player &&
          byConversation(later) > byConversation(turn) &&
          JSON.stringify(later.request.body.messages.at(-2)?.content ?? null).includes(uses[0]!.id),
      );
      if (uses.some((use) => SIGNALS.has(use.name))) {
        expect(next, `${uses[0]!.name} ended the task: no further request in that conversation`).toBeUndefined();
        continue;
      }
      expect(next, `no request answered ${uses.map((u) => u.name).join(', ')}`).toBeDefined();
      const messages = next!.request.body.messages as Array<{ role: string; content: Array<Record<string, any>> }>;
      // The assistant turn is replayed as sent, and the next user message answers each call in order.
      expect(messages.at(-2)).toEqual({ role: 'assistant', content: turn.reply });
      const last = messages.at(-1)!;
      expect(last.role).toBe('user');
      const results = last.content.filter((block) => block.type === 'tool_result');
      expect(results.map((block) => block.tool_use_id)).toEqual(uses.map((use) => use.id));
      for (const result of results) expect(result.is_error, `${JSON.stringify(result)}`).toBeUndefined();
    }
    // The signals themselves were honoured.
    expect(player.turns.flatMap((t) => t.reply).filter((b) => b.type === 'tool_use' && SIGNALS.has(b.name)).map((b) => (b as { name: string }).name)).toEqual([
      'complete_requirements_analysis',
      'submit_for_review',
      'approve_code',
    ]);
  });

  it('sends the API key only as the x-api-key header: never in bodies, the board, the trace, the workspace or the output', () => {
    for (const request of server.requests) {
      expect(request.headers['x-api-key']).toBe(KEY);
      for (const [name, value] of Object.entries(request.headers)) if (name !== 'x-api-key') expect(value, `header ${name}`).not.toContain(KEY);
      expect(request.rawBody).not.toContain(KEY);
    }
    // The engineer ran `env`: the child process saw no ANTHROPIC_* at all.
    const envRun = player.of('engineer')[2]!.request.body.messages.at(-1).content[0];
    expect(envRun.content).toMatch(/compiled/);
    expect(envRun.content).not.toMatch(/ANTHROPIC_/);
    const files = walk(root);
    expect(files.some((file) => file.endsWith('trace.jsonl'))).toBe(true);
    expect(files.filter((file) => /task_\d+\.json$/.test(file))).toHaveLength(3);
    for (const file of files) expect(fs.readFileSync(file, 'latin1').includes(KEY), file).toBe(false);
    expect(run.stdout + run.stderr).not.toContain(KEY);
  });
});

describe('autoteam run with an endpoint no retry fixes', () => {
  // A rejected key, and a base URL that points at something else, are permanent: no attempt after
  // the first, one line that never holds the key, and the configuration's exit code — not a pipeline
  // failed after five attempts.
  it.each([
    ['MODEL_AUTH', /401/],
    ['MODEL_ENDPOINT', /\/v1\/messages does not exist \(404.*\): check ANTHROPIC_BASE_URL/],
    ['MODEL_BAD_RESPONSE', /\/v1\/messages answered with a body that is not JSON \(.+\): check ANTHROPIC_BASE_URL/],
  ] as const)('stops at once on %s, with exit 2 and one request', async (code, said) => {
    const { errorReply, unauthorized } = await import('../helpers/messages-server.js');
    const reply = () =>
      code === 'MODEL_AUTH' ? unauthorized() : code === 'MODEL_ENDPOINT' ? errorReply(404, 'not_found_error', 'Not Found') : { status: 200, body: '{"id": "msg_1", "ty', headers: { 'content-type': 'application/json' } };
    const server = await MessagesServer.start(Array.from({ length: 10 }, reply));
    const root = tempBoard();
    try {
      // A timeout of ten hours: only the model's error can end this run before the test's ceiling.
      const run = await runCli(['run', '--auto', '--timeout', '600m', '--dir', root, DOWNLOADS_REQUIREMENT], {
        cwd: root,
        env: { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: server.url },
      });
      expect(run.code, describeRun(run)).toBe(2);
      expect(run.stdout).not.toMatch(/timed out/);
      const last = run.stderr.trim().split('\n').at(-1) ?? '';
      expect(last).toMatch(new RegExp(`^autoteam: .*\\(${code}\\)$`));
      expect(last).toMatch(said);
      expect(`${run.stdout}${run.stderr}`).not.toContain(KEY);
      expect(server.requests).toHaveLength(1);
      // The task went back to the board; nothing was left in progress.
      expect(readTasks(root).map((task) => task.status)).toEqual(['pending']);
    } finally {
      await server.close();
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('autoteam run with an endpoint that refuses the first request', () => {
  // A 400 no retry changes (a server without tools, a requirement too long for the model): the task
  // fails at once with the endpoint's words, not after five attempts and a minute of back-off.
  it('fails the pipeline after one request, saying the refusal; exit 1', async () => {
    const { errorReply } = await import('../helpers/messages-server.js');
    const server = await MessagesServer.start(Array.from({ length: 10 }, () => errorReply(400, 'invalid_request_error', 'tools: unsupported')));
    const root = tempBoard();
    try {
      const run = await runCli(['run', '--auto', '--timeout', '600m', '--dir', root, DOWNLOADS_REQUIREMENT], { cwd: root, env: { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: server.url } });
      expect(run.code, describeRun(run)).toBe(1);
      expect(run.stdout).toMatch(/pipeline #1: FAILED — Model API at http:\/\/127\.0\.0\.1:\d+ refused the request for model '.+' \(400 invalid_request_error: tools: unsupported\)/);
      expect(`${run.stdout}${run.stderr}`).not.toContain(KEY);
      expect(server.requests).toHaveLength(1);
      expect(readTasks(root).map((task) => task.status)).toEqual(['failed']);
    } finally {
      await server.close();
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('autoteam run with an endpoint that never answers', () => {
  // It takes the connection and says nothing: after the SDK's retries, each timed out, the run stops
  // with one line naming the timeout to raise, rather than backing off and trying the task again.
  it('stops once the retries of its first call have timed out, with exit 2 and MODEL_TIMEOUT', async () => {
    const http = await import('node:http');
    const held: Array<import('node:http').ServerResponse> = [];
    const server = http.createServer((_request, response) => void held.push(response));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as import('node:net').AddressInfo).port}`;
    const root = tempBoard();
    try {
      const run = await runCli(['run', '--auto', '--timeout', '600m', '--dir', root, DOWNLOADS_REQUIREMENT], {
        cwd: root,
        // Each attempt's second is what a busy machine needs to send its request before it times out.
        env: { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: url, ANTHROPIC_TIMEOUT_MS: '1000' },
      });
      expect(run.code, describeRun(run)).toBe(2);
      const last = run.stderr.trim().split('\n').at(-1) ?? '';
      expect(last).toMatch(new RegExp(`^autoteam: .*No answer from ${url} within 1000 ms \\(4 retries\\): check the endpoint, or raise ANTHROPIC_TIMEOUT_MS \\(MODEL_TIMEOUT\\)$`));
      // One call: the first request and the SDK's four retries, and no attempt after it.
      expect(held).toHaveLength(5);
      expect(readTasks(root).map((task) => task.status)).toEqual(['pending']);
      // What became of the pipeline comes before: left open, for the next lead in this folder.
      expect(run.stdout).toContain('pipeline #1: LEFT OPEN — stopped by a model error; pipeline #1 is left open on the board (a lead here goes on with it, autoteam cancel 1 drops it)');
      expect(`${run.stdout}${run.stderr}`).not.toContain(KEY);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('--json and stream-json with an endpoint no retry fixes', () => {
  it('still give each pipeline its result: left open, stopped by the model error, with exit 2', async () => {
    const { unauthorized } = await import('../helpers/messages-server.js');
    const server = await MessagesServer.start(Array.from({ length: 10 }, () => unauthorized()));
    const roots = [tempBoard(), tempBoard()];
    try {
      const env = { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: server.url };
      const json = await runCli(['run', '--auto', '--json', '--dir', roots[0]!, DOWNLOADS_REQUIREMENT], { cwd: roots[0]!, env });
      expect(json.code, describeRun(json)).toBe(2);
      expect(JSON.parse(json.stdout)).toMatchObject({ pipeline: 1, status: 'active', reason: 'stopped by a model error; pipeline #1 is left open on the board (a lead here goes on with it, autoteam cancel 1 drops it)', requirement: DOWNLOADS_REQUIREMENT });
      expect(json.stderr.trim().split('\n').at(-1)).toMatch(/^autoteam: .*\(MODEL_AUTH\)$/);
      const stream = await runCli(['run', '--auto', '--output-format', 'stream-json', '--dir', roots[1]!, DOWNLOADS_REQUIREMENT], { cwd: roots[1]!, env });
      expect(stream.code, describeRun(stream)).toBe(2);
      const records = stream.stdout.trim().split('\n').map((line) => JSON.parse(line) as { type: string; is_error?: boolean; status?: string; reason?: string });
      expect(records.filter((record) => record.type === 'result')).toEqual([expect.objectContaining({ is_error: true, status: 'active', reason: expect.stringMatching(/^stopped by a model error; pipeline #1 is left open on the board/) })]);
      expect(records.at(-1)!.type).toBe('result');
      expect(`${json.stdout}${json.stderr}${stream.stdout}${stream.stderr}`).not.toContain(KEY);
    } finally {
      await server.close();
      for (const root of roots) fs.rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('line mode with an endpoint no retry fixes', () => {
  it('ends with exit 1, saying the team stopped on the model error, not that a role is missing', async () => {
    const { errorReply } = await import('../helpers/messages-server.js');
    const server = await MessagesServer.start(Array.from({ length: 10 }, () => errorReply(404, 'not_found_error', 'Not Found')));
    const root = tempBoard();
    try {
      const run = await runCli(['--auto', '--dir', root], { cwd: root, input: `/post ${DOWNLOADS_REQUIREMENT}\n`, env: { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: server.url } });
      expect(run.code, describeRun(run)).toBe(1);
      expect(run.stdout).toMatch(/^left open: pipeline #1; the team stopped on a model error no retry fixes \(MODEL_ENDPOINT\): once it is mended, a lead here goes on with it$/m);
      // The stuck-pipeline variant of the line would name the role nobody serves. (The teammate's own
      // "left:" line, printed when it stops, may name /spawn: that one is right.)
      expect(run.stdout).not.toMatch(/waits for a teammate of role|nobody in this session takes it on/);
      expect(run.stdout.match(/^left open:/gm)).toHaveLength(1);
      expect(server.requests).toHaveLength(1);
    } finally {
      await server.close();
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('autoteam run with an endpoint that keeps failing', () => {
  it('says beside its 0 model calls how often its task was tried again after an error, each attempt one request', async () => {
    const { errorReply } = await import('../helpers/messages-server.js');
    // A 500 the SDK is told not to retry: each of the task's attempts is one request.
    const server = await MessagesServer.start(Array.from({ length: 10 }, () => ({ ...errorReply(500, 'api_error', 'Internal server error'), headers: { 'x-should-retry': 'false' } })));
    const root = tempBoard();
    const again = tempBoard();
    try {
      const run = await runCli(['run', '--auto', '--max-attempts', '2', '--dir', root, DOWNLOADS_REQUIREMENT], {
        cwd: root,
        env: { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: server.url, RETRY_BACKOFF: '50ms' },
      });
      expect(run.code, describeRun(run)).toBe(1);
      expect(run.stdout).toMatch(/^pipeline #1: FAILED — .*gave up after 2 failed attempts/m);
      expect(run.stdout).toMatch(/ · pipeline #1: 0 model calls · 0 tokens · its tasks tried again 1 time after errors$/m);
      expect(server.requests).toHaveLength(2);
      const json = await runCli(['run', '--auto', '--json', '--max-attempts', '3', '--dir', again, DOWNLOADS_REQUIREMENT], { cwd: again, env: { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: server.url, RETRY_BACKOFF: '50ms' } });
      expect(JSON.parse(json.stdout), describeRun(json)).toMatchObject({ status: 'failed', retries: 2, usage: { calls: 0 } });
      expect(server.requests).toHaveLength(5);
    } finally {
      await server.close();
      for (const dir of [root, again]) fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

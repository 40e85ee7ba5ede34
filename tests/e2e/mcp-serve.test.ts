/**
 * `autoteam mcp serve` driven by the official SDK's Client over stdio, as Claude Code or Cursor
 * would drive it: the built CLI as a child process on a board. With `autoteam worker`s running (the
 * offline team) it posts a requirement, answers the analyst's question, hears the task's resource
 * change, and waits for the pipeline's approval; without a team it says how to start one; it
 * cancels and retries. With `--team --auto` on a git repository it runs the team itself, and the
 * approved branch is diffed and merged through its tools.
 */
import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { type CallToolResult, ResourceListChangedNotificationSchema, ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileBoard } from '../../src/core/board/board.js';
import { TeamRegistry, isLive } from '../../src/core/board/team-registry.js';
import { playbookAnswer } from '../../src/core/model/scripted/playbook.js';
import { BOARD_TOOLS } from '../../src/mcp-server/board-tools.js';
import { HANG_MS, until } from '../helpers/agent-wait.js';
import { cleanEnv, cliEntry, DOWNLOADS_REQUIREMENT, tempBoard } from '../helpers/pipeline-cli.js';

const python = spawnSync('python3', ['--version']).status === 0;

/** A client of `autoteam mcp serve <args>`, with what the server told it. */
async function connect(root: string, args: string[], env: Record<string, string> = {}) {
  const transport = new StdioClientTransport({ command: process.execPath, args: [cliEntry, 'mcp', 'serve', '--dir', root, ...args], env: { ...cleanEnv(), ...env }, cwd: root, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (chunk) => (stderr += String(chunk)));
  const client = new Client({ name: 'autoteam-test', version: '1.0.0' });
  const errors: Error[] = [];
  client.onerror = (error) => errors.push(error);
  const updates: string[] = [];
  let wake = () => undefined as void;
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
    updates.push(notification.params.uri);
    wake();
  });
  let listChanged = 0;
  client.setNotificationHandler(ResourceListChangedNotificationSchema, () => {
    listChanged++;
  });
  await client.connect(transport);
  const progress: string[] = [];
  return {
    client,
    /** The progress messages the server sent while a call waited. */
    progress,
    errors,
    updates,
    stderr: () => stderr,
    listChanged: () => listChanged,
    /** Resolves once more than `seen` resource updates have arrived (a ceiling only a hang reaches). */
    updatesPast: (seen: number) =>
      new Promise<void>((resolve, reject) => {
        if (updates.length > seen) return resolve();
        const timer = setTimeout(() => reject(new Error(`no resource update within ${HANG_MS} ms; server stderr:\n${stderr}`)), HANG_MS);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      }),
    /** Calls a tool; returns its text and whether it is an error. Progress resets the client's timeout (a wait for a pipeline). */
    call: async (name: string, args: Record<string, unknown> = {}) => {
      const result = (await client.callTool({ name, arguments: args }, undefined, { timeout: HANG_MS, onprogress: (step) => progress.push(step.message ?? ''), resetTimeoutOnProgress: true })) as CallToolResult;
      const text = result.content.map((item) => (item.type === 'text' ? item.text : '')).join('\n');
      return { text, isError: result.isError === true };
    },
  };
}

function startWorker(root: string, role: string): ChildProcess {
  return spawn(process.execPath, [cliEntry, 'worker', '--name', role, '--role', role, '--dir', root, '--idle-timeout', '0'], { cwd: root, env: cleanEnv(), stdio: 'ignore' });
}

describe.runIf(python)('autoteam mcp serve beside a team of workers', () => {
  const root = tempBoard('autoteam-mcp-serve-');
  const workers: ChildProcess[] = [];
  let server: Awaited<ReturnType<typeof connect>>;

  beforeAll(async () => {
    server = await connect(root, []);
  });

  afterAll(async () => {
    await server?.client.close();
    await Promise.all(workers.map((worker) => new Promise((resolve) => (worker.exitCode !== null ? resolve(null) : (worker.once('exit', resolve), worker.kill('SIGTERM'))))));
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('lists its tools', async () => {
    const { tools } = await server.client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual([...BOARD_TOOLS]);
    expect(server.client.getServerCapabilities()?.resources).toMatchObject({ subscribe: true, listChanged: true });
  });

  it('refuses to post while no team runs, saying how to start one', async () => {
    const refused = await server.call('post_requirement', { requirement: DOWNLOADS_REQUIREMENT });
    expect(refused.isError).toBe(true);
    expect(refused.text).toContain('No team is running on this board (no lead, and no live analyst)');
    expect(refused.text).toContain(`autoteam worker --name analyst --role analyst --dir ${root}`);
    expect(fs.existsSync(path.join(root, '.tasks', 'task_1.json'))).toBe(false);
    // A blank requirement is its own fault, said first, team or not.
    expect(await server.call('post_requirement', { requirement: '   ' })).toEqual({ isError: true, text: 'requirement: a requirement cannot be empty' });
    // One limit with the command line and the web board: 100 KB, said in the same words (not a schema's count of characters).
    expect(await server.call('post_requirement', { requirement: '' })).toEqual({ isError: true, text: 'requirement: a requirement cannot be empty' });
    const large = await server.call('post_requirement', { requirement: `Write a word counter ${'a'.repeat(101_000)}` });
    expect(large.text).toContain('No team is running on this board');
    const over = await server.call('post_requirement', { requirement: `Write a word counter ${'a'.repeat(103_000)}` });
    expect(over).toEqual({ isError: true, text: 'requirement: a requirement is at most 100 KB (this one is 101 KB): put the details in a file and refer to it' });
  });

  it('posts with workers running, answers the analyst, hears the task change, and waits for the approval', async () => {
    for (const role of ['analyst', 'engineer', 'reviewer']) workers.push(startWorker(root, role));
    const registry = new TeamRegistry(root);
    await until(() => registry.read().members.filter(isLive).length === 3, 'three workers on the board');

    const posted = await server.call('post_requirement', { requirement: DOWNLOADS_REQUIREMENT });
    expect(posted).toEqual({ text: expect.stringMatching(/^Posted pipeline #1: task #1 \(requirements\) — /), isError: false });
    await server.client.subscribeResource({ uri: 'autoteam://task/1' });

    // A wait for the pipeline ends when it waits on an answer, naming the question to answer.
    const waiting = await server.call('pipeline_status', { pipeline: 1, wait_seconds: 120 });
    expect(JSON.parse(waiting.text), waiting.text).toMatchObject({
      status: 'active',
      waiting_for_answer: [{ question_id: expect.any(String), from: 'analyst', task: 1, question: expect.any(String) }],
      next: expect.stringContaining('answer_question'),
    });

    // The analyst asks; each question is on its task, which the subscription hears change. Answered as
    // the offline simulated user would (the offline engineer builds from those answers).
    const asked: string[] = [];
    for (;;) {
      const seen = server.updates.length;
      if (!['pending', 'in_progress'].includes((JSON.parse((await server.call('get_task', { id: 1 })).text) as { status: string }).status)) break;
      const questions = await server.call('list_questions');
      if (questions.text.startsWith('No question')) {
        await server.updatesPast(seen);
        continue;
      }
      for (const question of JSON.parse(questions.text) as Array<{ question_id: string; from: string; task: number; question: string }>) {
        expect(question).toMatchObject({ from: 'analyst', task: 1 });
        const answered = await server.call('answer_question', { question_id: question.question_id, answer: playbookAnswer(question.question, asked, DOWNLOADS_REQUIREMENT) });
        expect(answered).toEqual({ text: `Answered analyst's question ${question.question_id}: ${question.question}`, isError: false });
        asked.push(question.question);
      }
    }
    expect(asked.length).toBeGreaterThan(0);

    const status = await server.call('pipeline_status', { pipeline: 1, wait_seconds: 600 });
    const state = JSON.parse(status.text) as { status: string; tasks: Array<{ stage: string; status: string; owner: string }> };
    expect(state.status, `${status.text}\nserver stderr:\n${server.stderr()}`).toBe('approved');
    expect(state.tasks.map((task) => task.stage)).toEqual(expect.arrayContaining(['requirements', 'implementation', 'review']));

    expect(server.updates.filter((uri) => uri === 'autoteam://task/1').length).toBeGreaterThanOrEqual(2);
    const resource = await server.client.readResource({ uri: 'autoteam://task/1' });
    expect(JSON.parse((resource.contents[0] as { text: string }).text)).toMatchObject({ id: 1, status: 'completed', owner: 'analyst', stage: 'requirements' });
    const { resources } = await server.client.listResources();
    expect(resources.map((entry) => entry.uri)).toEqual(state.tasks.map((_task, i) => `autoteam://task/${i + 1}`));
    expect(server.listChanged()).toBeGreaterThanOrEqual(state.tasks.length);

    const lines = (await server.call('list_tasks', { pipeline: 1 })).text.split('\n');
    expect(lines).toHaveLength(state.tasks.length);
    expect(lines[0]).toMatch(/#1: .*\(requirements\) @analyst/);
    expect(JSON.parse((await server.call('get_task', { id: 2 })).text)).toMatchObject({ id: 2, stage: 'implementation', status: 'completed' });
    expect(await server.call('get_task', { id: 99 })).toEqual({ text: 'No task #99 on this board.', isError: true });
    // An unknown task's resource: one error code, said once (not `MCP error -32602: MCP error -32602: …`).
    await expect(server.client.readResource({ uri: 'autoteam://task/999' })).rejects.toThrow(/^MCP error -32602: no task autoteam:\/\/task\/999 on this board$/);
    expect(server.errors).toEqual([]);
  });

  it('cancels and retries a pipeline; a pipeline without a branch cannot be merged', async () => {
    // A requirement the analyst asks about, and nobody answers: its task stays open until cancelled
    // (one it could finish at once might complete between the cancel's read and its write).
    const posted = await server.call('post_requirement', { requirement: DOWNLOADS_REQUIREMENT });
    const pipeline = Number(/pipeline #(\d+)/.exec(posted.text)![1]);
    const cancelled = await server.call('cancel_pipeline', { pipeline, reason: 'changed my mind' });
    expect(cancelled.text).toMatch(new RegExp(`^Cancelled pipeline #${pipeline}: task #\\d+\\.$`));
    expect(JSON.parse((await server.call('pipeline_status', { pipeline })).text)).toMatchObject({ status: 'cancelled' });
    const retried = await server.call('retry_pipeline', { pipeline });
    expect(retried).toEqual({ text: expect.stringMatching(new RegExp(`^Retried pipeline #${pipeline}: task #\\d+ \\(requirements\\)`)), isError: false });
    await server.call('cancel_pipeline', { pipeline });
    const merge = await server.call('merge_pipeline', { pipeline: 1 });
    expect(merge).toEqual({ text: expect.stringContaining('pipeline #1 has no branch'), isError: true });
    expect((await server.call('pipeline_status', { pipeline: 99 })).text).toBe('No pipeline #99 on this board.');
    // Another folder's pipeline branches on a remote (held back: nobody here claims it): a post from
    // this folder, which names no remote, says where it works instead.
    const git = { repo: '/elsewhere/shop', branch: 'autoteam/50-shop', base: 'a'.repeat(40), worktree: '/elsewhere/wt/50', remote: '/srv/git/shop.git' };
    await fileBoard(root).tasks.create({ subject: 'Analyse: a shop', stage: 'requirements', role: 'analyst', pipeline: 50, artifacts: { git }, notBefore: new Date(Date.now() + 3_600_000).toISOString() });
    const beside = await server.call('post_requirement', { requirement: DOWNLOADS_REQUIREMENT });
    const mine = Number(/pipeline #(\d+)/.exec(beside.text)![1]);
    await server.call('cancel_pipeline', { pipeline: mine });
    expect(beside.text.split('\n').at(-1)).toBe(`Note: pipeline #50 of this board branches on the remote /srv/git/shop.git, and this folder names no remote: pipeline #${mine} works in a folder (workspace/<n>); give --remote (or repository.remote in autoteam.config.json) to branch it there.`);
  });
});

describe.runIf(python)('autoteam mcp serve --team on a git repository', () => {
  const repo = tempBoard('autoteam-mcp-team-');
  let server: Awaited<ReturnType<typeof connect>>;
  const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, encoding: 'utf8', env: { ...process.env, GIT_AUTHOR_NAME: 'P', GIT_AUTHOR_EMAIL: 'p@x', GIT_COMMITTER_NAME: 'P', GIT_COMMITTER_EMAIL: 'p@x' } }).trim();

  beforeAll(async () => {
    git('init', '-q', '-b', 'main');
    fs.writeFileSync(path.join(repo, 'README.md'), '# A project\n');
    git('add', 'README.md');
    git('commit', '-q', '-m', 'Initial commit');
    server = await connect(repo, ['--team', '--auto']);
  });

  afterAll(async () => {
    await server?.client.close();
    fs.rmSync(repo, { recursive: true, force: true });
  });

  it('runs the team itself, and merges the approved branch through its tools', async () => {
    const posted = await server.call('post_requirement', { requirement: DOWNLOADS_REQUIREMENT });
    expect(posted.isError, posted.text).toBe(false);
    const status = JSON.parse((await server.call('pipeline_status', { pipeline: 1, wait_seconds: 600 })).text) as { status: string; branch: string; commit: string };
    expect(status.status, server.stderr()).toBe('approved');
    expect(status.branch).toMatch(/^autoteam\/1-/);
    // While it waited, each step of the pipeline came as progress.
    expect(server.progress.length).toBeGreaterThanOrEqual(2);
    for (const message of server.progress) expect(message).toMatch(/^#\d+ (requirements|implementation|review): (pending|in_progress|completed)$/);
    // Each step once: a completion and the post it leads to do not both say the new task is pending.
    expect(server.progress.filter((message, i) => message === server.progress[i - 1])).toEqual([]);
    const diff = await server.call('diff_pipeline', { pipeline: 1 });
    expect(diff.text).toMatch(/^pipeline #1 · autoteam\/1-.* · commit [0-9a-f]{12} · 1 file: A organize\.py/);
    const merged = await server.call('merge_pipeline', { pipeline: 1 });
    expect(merged.isError, merged.text).toBe(false);
    expect(git('log', '-1', '--format=%H', 'main')).toBe(status.commit);
    expect(fs.existsSync(path.join(repo, 'organize.py'))).toBe(true);
    expect(server.errors).toEqual([]);
  });
});

describe('autoteam mcp serve given lines that are not JSON-RPC', () => {
  it('answers each with JSON-RPC’s error (-32700, -32600 with id null; -32602 for params, naming the field) and goes on serving', async () => {
    const root = tempBoard('autoteam-mcp-raw-');
    const child = spawn(process.execPath, [cliEntry, 'mcp', 'serve', '--dir', root], { cwd: root, env: cleanEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout!.setEncoding('utf8').on('data', (text: string) => (stdout += text));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    child.stdin!.write('{not json\n["x"]\n{"jsonrpc":"2.0","id":7,"method":"ping"}\n');
    // Requests whose params are no object, or whose arguments are none: -32602 naming the field.
    child.stdin!.write('{"jsonrpc":"2.0","id":8,"method":"tools/call"}\n{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"get_task","arguments":"str"}}\n');
    await until(() => stdout.split('\n').filter(Boolean).length >= 5 || null, 'five replies');
    child.stdin!.end();
    expect(await exited).toBe(0);
    // Each answered once; requests are answered as they finish, so not always in the order sent.
    const replies = stdout.split('\n').filter(Boolean).map((line) => JSON.parse(line) as unknown);
    expect(replies).toHaveLength(5);
    expect(replies).toEqual(expect.arrayContaining([
      { jsonrpc: '2.0', id: null, error: { code: -32700, message: expect.stringMatching(/^Parse error: /) } },
      { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request: not a JSON-RPC 2.0 message' } },
      { jsonrpc: '2.0', id: 7, result: {} },
      { jsonrpc: '2.0', id: 8, error: { code: -32602, message: 'Invalid params: params: Invalid input: expected object, received undefined' } },
      { jsonrpc: '2.0', id: 9, error: { code: -32602, message: 'Invalid params: params.arguments: Invalid input: expected record, received string' } },
    ]));
  });
});

describe('autoteam mcp serve and the secrets of its environment', () => {
  it('redacts them in every tool result and resource, as the web board does, even where a task holds one raw', async () => {
    const root = tempBoard('autoteam-mcp-secret-');
    const token = 'ghp_SECRETVALUE1234567890';
    // Posted by a process whose environment lacked the token: the task file holds it as written.
    const board = fileBoard(root);
    await board.tasks.create({ subject: `deploy with token ${token} now`, description: `use ${token}` });
    await board.close();
    expect(fs.readFileSync(path.join(root, '.tasks', 'task_1.json'), 'utf8')).toContain(token);
    const server = await connect(root, [], { GITHUB_TOKEN: token });
    try {
      const said = [
        (await server.call('list_tasks')).text,
        (await server.call('get_task', { id: 1 })).text,
        JSON.stringify(await server.client.listResources()),
        JSON.stringify(await server.client.readResource({ uri: 'autoteam://task/1' })),
      ];
      for (const text of said) {
        expect(text).not.toContain(token);
        expect(text).toContain('[redacted]');
      }
    } finally {
      await server.client.close();
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});

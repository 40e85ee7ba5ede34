/**
 * Containment as the tools and the teammate runtime apply it: hard links and FIFOs refused by the
 * file tools, writes refused once a claim was taken over, a resource limit reported as a tool error,
 * secrets kept off the board, the trace and the model requests, and the processes of a SIGKILLed
 * `autoteam worker` gone with it. Real files, real processes, real bubblewrap where it works.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomInt } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { Teammate, type TeammateEvent } from '../../src/core/agent/teammate.js';
import { Wake } from '../../src/core/agent/wake.js';
import { Mailbox } from '../../src/core/board/mailbox.js';
import { TaskBoard } from '../../src/core/board/task-board.js';
import { type Containment, containment, DEFAULT_LIMITS, DEFAULT_SANDBOX_POLICY, Sandbox } from '../../src/core/exec/sandbox.js';
import type { ModelMessage, ToolResultBlock } from '../../src/core/model/types.js';
import { Pipeline } from '../../src/core/stages/pipeline.js';
import { bashTool } from '../../src/core/tools/bash.js';
import { editFileTool } from '../../src/core/tools/edit-file.js';
import { readFileTool } from '../../src/core/tools/read-file.js';
import { writeFileTool } from '../../src/core/tools/write-file.js';
import { Trace } from '../../src/core/trace/trace.js';
import { makeTeam } from '../helpers/agent-team.js';
import { HANG_MS, removeBoard, tempBoard, until } from '../helpers/agent-wait.js';
import { FakeModel, type RecordedCall, reply, toolUse } from '../helpers/fake-model.js';
import { MessagesServer, ok, toolUseMessage } from '../helpers/messages-server.js';
import { call, makeToolContext, type TestContext } from './context.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '..', '..');
const CLI = path.join(repoRoot, 'dist', 'cli', 'bundle', 'main.js');
const bwrap = containment();

const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function toolContext(): TestContext {
  const t = makeToolContext();
  cleanups.push(t.cleanup);
  return t;
}

function board(): string {
  const root = tempBoard('autoteam-containment-');
  cleanups.push(() => removeBoard(root));
  return root;
}

/** The tool_result blocks the loop put in the last user message of a request. */
function lastResults(messages: readonly ModelMessage[]): ToolResultBlock[] {
  const last = messages.at(-1);
  if (last?.role !== 'user' || typeof last.content === 'string') return [];
  return last.content.filter((block): block is ToolResultBlock => block.type === 'tool_result');
}

// ---- 1. hard links and FIFOs ------------------------------------------------------------------

describe('file tools refuse what is not a plain file of the workspace', () => {
  it('a hard link to a file outside the workspace: read_file, write_file and edit_file each refuse it', async () => {
    const t = toolContext();
    const outside = path.join(t.root, 'outside-secret.txt');
    const original = 'password = hunter2\n';
    fs.writeFileSync(outside, original);
    fs.linkSync(outside, path.join(t.workspace, 'linked.txt'));

    const read = await call(readFileTool, { path: 'linked.txt' }, t.ctx);
    const write = await call(writeFileTool, { path: 'linked.txt', content: 'overwritten\n' }, t.ctx);
    const edit = await call(editFileTool, { path: 'linked.txt', old_text: 'hunter2', new_text: 'changed' }, t.ctx);

    for (const outcome of [read, write, edit]) {
      expect(outcome.isError).toBe(true);
      expect(outcome.content).toMatch(/hard link/);
      expect(outcome.content).not.toContain('hunter2');
    }
    expect(fs.readFileSync(outside, 'utf8')).toBe(original);
    expect(fs.statSync(outside).nlink).toBe(2);
    expect(t.records).toEqual([]);
  });

  it('a FIFO in the workspace: read_file answers at once with an error instead of blocking', async () => {
    const t = toolContext();
    const fifo = path.join(t.workspace, 'pipe');
    execFileSync('mkfifo', [fifo]);
    // A dead man's switch, not a wait: a read_file that opened the FIFO would block this thread in
    // open(2), where no test timeout can reach it. This child writes a line into the FIFO (its open
    // waits for a reader), which releases such a reader with that line, so a blocking read_file fails
    // the assertions instead of hanging the run, however long it took to get there. A read_file that
    // refuses the FIFO (the point) never opens it; the child is killed below.
    const watchdog = spawn('/bin/sh', ['-c', 'echo "read from the FIFO" > "$1"', 'sh', fifo], { stdio: 'ignore' });
    cleanups.push(() => {
      if (watchdog.exitCode === null && watchdog.signalCode === null) watchdog.kill('SIGKILL');
    });

    const outcome = await call(readFileTool, { path: 'pipe' }, t.ctx);

    expect(outcome.isError).toBe(true);
    expect(outcome.content).toMatch(/FIFO|device/);
    expect(outcome.content).not.toContain('read from the FIFO');
  });
});

// ---- 2. a late write after a takeover --------------------------------------------------------

describe('a teammate whose claim was taken over', () => {
  it('gets its next write refused, leaves the file as it was, and stops working the task', async () => {
    const root = board();
    await makeTeam(root);
    const testBoard = new TaskBoard(root);
    const pipeline = new Pipeline(testBoard, new Mailbox(root));
    const task = await pipeline.post('Write a greeting program.', { startStage: 'implementation' });
    const file = path.join(pipeline.workspaceOf(task.pipeline!), 'main.py');
    const FIRST = 'print("first")\n';
    let firstResult: ToolResultBlock | undefined;

    const model = new FakeModel([
      reply(toolUse('write_file', { path: 'main.py', content: FIRST })),
      async (recorded: RecordedCall) => {
        firstResult = lastResults(recorded.messages)[0];
        // The takeover happens while this model call is in flight.
        const reclaimed = await testBoard.reclaimFrom(task.id, 'engineer', 'test takes the task over', 'test');
        expect(reclaimed.ok).toBe(true);
        const claimed = await testBoard.claim(task.id, 'intruder');
        expect(claimed.ok).toBe(true);
        return reply(toolUse('write_file', { path: 'main.py', content: 'print("late write")\n' }));
      },
    ]);
    const events: TeammateEvent[] = [];
    const teammate = new Teammate({
      name: 'engineer',
      role: 'engineer',
      rootDir: root,
      model,
      wake: new Wake(),
      signal: AbortSignal.timeout(HANG_MS),
      settings: { pollMs: 25, idleTimeoutMs: 400 },
      emit: (event) => events.push(event),
    });

    const reason = await teammate.run();

    expect(reason).toMatch(/^idle for/);
    // Two model calls and no third: the loop stopped after the refused write.
    model.assertDone();
    expect(model.requests).toHaveLength(2);
    expect(firstResult).toMatchObject({ content: `wrote main.py (${Buffer.byteLength(FIRST)} bytes)` });
    expect(firstResult!.is_error).toBeUndefined();

    expect(fs.readFileSync(file, 'utf8')).toBe(FIRST);

    // The refused write is no line of its own; the teammate says once why it stopped.
    const shown = events.flatMap((e) => (e.type === 'activity' && e.task === task.id ? [e.text] : []));
    expect(shown.filter((text) => !text.startsWith('claimed'))).toEqual([`write_file: wrote main.py (${Buffer.byteLength(FIRST)} bytes)`, `stopped #${task.id}: intruder holds it now`]);
    const writes = new Trace(root).read().filter((r) => r.kind === 'tool_call' && r.tool === 'write_file');
    expect(writes.map((r) => (r as { ok: boolean }).ok)).toEqual([true, false]);

    // Neither completed, failed nor released by the engineer: the intruder's claim is the last word.
    const after = testBoard.get(task.id);
    expect(after).toMatchObject({ status: 'in_progress', owner: 'intruder', claims: 2 });
    expect(after.history.at(-1)).toMatchObject({ event: 'claimed', by: 'intruder' });
    expect(after.artifacts.files).toEqual([expect.objectContaining({ path: 'main.py', bytes: Buffer.byteLength(FIRST) })]);
    expect(testBoard.list()).toHaveLength(1);
  });
});

// ---- 3. a resource limit as a tool error -----------------------------------------------------

const profiles: Array<[string, Containment | null]> = [
  ['bubblewrap', bwrap.kind === 'bwrap' ? bwrap : null],
  ['no bubblewrap (fallback)', { kind: 'none', reason: 'test' }],
];

describe.each(profiles)('bash tool limits: %s', (_label, contained) => {
  it.runIf(contained)('reports the file size limit as a tool error naming it', async () => {
    const t = toolContext();
    t.ctx.sandbox = new Sandbox(
      { workspace: t.workspace, hidden: [t.root], network: false, limits: { ...DEFAULT_LIMITS, fileSizeMb: 1 } },
      contained!,
    );

    const outcome = await call(bashTool, { command: 'head -c 3000000 /dev/zero > big' }, t.ctx);

    expect(outcome.isError).toBe(true);
    expect(outcome.content).toContain('file size limit (1 MB per file)');
    expect(fs.statSync(path.join(t.workspace, 'big')).size).toBeLessThanOrEqual(1024 * 1024);
    expect(t.records).toEqual([{ event: 'ran', detail: 'head -c 3000000 /dev/zero > big → file size limit hit' }]);
  });
});

// ---- 4. secrets ------------------------------------------------------------------------------

// 'auto' is bubblewrap where it works; 'off' is the fallback (allow-listed environment, limits).
describe.each(['auto', 'off'] as const)('a secret the model knows (sandbox %s)', (mode) => {
  const SECRET = `ghp_containment${randomInt(1e9)}x${process.pid}`;
  const PASSWORD = `pw${randomInt(1e9)}Zq${process.pid}`;
  const saved: Record<string, string | undefined> = {};

  afterEach(() => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  it('never reaches the board, the trace or a tool result sent to the model; the child cannot see it', async () => {
    for (const name of ['GH_PAT', 'DATABASE_URL']) saved[name] = process.env[name];
    process.env.GH_PAT = SECRET;
    process.env.DATABASE_URL = `postgres://u:${PASSWORD}@h/db`;
    const root = board();
    await makeTeam(root);
    const pipeline = new Pipeline(new TaskBoard(root), new Mailbox(root));
    const task = await pipeline.post('Write a greeting program.', { startStage: 'implementation' });
    const workspace = pipeline.workspaceOf(task.pipeline!);
    const program = `TOKEN = "${SECRET}"\nDB = "postgres://u:${PASSWORD}@h/db"\nprint("hello")\n`;

    const upstream = `upstream rejected the request: token ${SECRET}`;
    const model = new FakeModel([
      // A model error whose message quotes the secret: it goes to the trace and to the board (the task
      // is handed back with the reason), then the teammate claims the task again.
      () => {
        throw new Error(upstream);
      },
      // The model states the secret literally: in a command and in a file.
      reply(
        toolUse('bash', { command: `echo "token ${SECRET} password ${PASSWORD}"; env > env.txt` }),
        toolUse('write_file', { path: 'main.py', content: program }),
      ),
      // Then reads it back without naming it: the output alone carries it.
      reply(toolUse('read_file', { path: 'main.py' }), toolUse('bash', { command: 'cat main.py; echo "$GH_PAT|$DATABASE_URL"' })),
      reply(toolUse('submit_for_review', { file: 'main.py' })),
    ]);
    const events: TeammateEvent[] = [];
    const teammate = new Teammate({
      name: 'engineer',
      role: 'engineer',
      rootDir: root,
      model,
      wake: new Wake(),
      signal: AbortSignal.timeout(HANG_MS),
      settings: { pollMs: 25, idleTimeoutMs: 400, retryBaseMs: 20, sandbox: { ...DEFAULT_SANDBOX_POLICY, mode } },
      emit: (event) => events.push(event),
    });
    expect(await teammate.run()).toMatch(/^idle for/);
    expect(model.remaining).toBe(0);
    expect(model.errors.map((e) => e.message)).toEqual([upstream]);

    // The child's environment (read raw from the workspace, not through redaction) holds neither.
    const env = fs.readFileSync(path.join(workspace, 'env.txt'), 'utf8');
    expect(env).toMatch(/^PATH=/m);
    expect(env).not.toContain(SECRET);
    expect(env).not.toContain(PASSWORD);
    expect(env).not.toMatch(/^(GH_PAT|DATABASE_URL)=/m);
    // The workspace file is the model's to keep: it does hold the secret.
    expect(fs.readFileSync(path.join(workspace, 'main.py'), 'utf8')).toBe(program);

    // What the runtime sends the model: every tool result, and its own earlier turns replayed redacted.
    const [, , second, third] = model.requests;
    const results = [...lastResults(second!.messages), ...lastResults(third!.messages)];
    expect(results).toHaveLength(4);
    for (const result of results) expect(result.is_error).toBeUndefined();
    const resultText = results.map((r) => r.content).join('\n');
    // The outputs did carry the values (redacted, not missing): the bash echo, read_file, cat.
    expect(resultText.match(/\[redacted\]/g)!.length).toBeGreaterThanOrEqual(5);
    expect(resultText).toContain('hello');
    for (const recorded of model.requests) {
      const sent = JSON.stringify(recorded.messages);
      expect(sent).not.toContain(SECRET);
      expect(sent).not.toContain(PASSWORD);
    }

    // The board: every task file, as text (the review task's handoff quotes the submitted file).
    const taskFiles = fs.readdirSync(path.join(root, '.tasks')).filter((name) => /^task_\d+\.json$/.test(name));
    expect(taskFiles.sort()).toEqual(['task_1.json', 'task_2.json']);
    const boardText = taskFiles.map((name) => fs.readFileSync(path.join(root, '.tasks', name), 'utf8')).join('\n');
    expect(boardText).toContain('attempt 1 failed: upstream rejected the request: token [redacted]');
    expect(boardText).toContain('print(\\"hello\\")');
    expect(boardText).not.toContain(SECRET);
    expect(boardText).not.toContain(PASSWORD);

    const trace = fs.readFileSync(path.join(root, '.team', 'trace.jsonl'), 'utf8');
    expect(trace).toContain('"tool":"bash"');
    expect(trace).toContain('upstream rejected the request: token [redacted]');
    expect(trace).not.toContain(SECRET);
    expect(trace).not.toContain(PASSWORD);

    // What the host prints and keeps: activity, status and error events alike.
    const emitted = JSON.stringify(events);
    expect(events.some((e) => e.type === 'activity' && e.text.startsWith('bash'))).toBe(true);
    expect(emitted).not.toContain(SECRET);
    expect(emitted).not.toContain(PASSWORD);
  });
});

// ---- 5. the processes of a killed worker -----------------------------------------------------

/** Live (not zombie) processes whose command line matches `pattern`. */
function alive(pattern: string): number[] {
  let out = '';
  try {
    out = execFileSync('pgrep', ['-f', pattern], { encoding: 'utf8' });
  } catch {
    return [];
  }
  return out
    .split('\n')
    .filter(Boolean)
    .map(Number)
    .filter((pid) => {
      try {
        const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
        return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
      } catch {
        return false;
      }
    });
}

// Only under bubblewrap: --die-with-parent and the PID namespace take the whole tree down with the
// worker. Without it, a SIGKILLed worker cannot sweep anything, and its children may outlive it.
describe.runIf(bwrap.kind === 'bwrap')('a SIGKILLed `autoteam worker` (bubblewrap)', () => {
  it('takes the processes its bash tool started down with it', async () => {
    expect(fs.existsSync(CLI), `${CLI} is missing: npm run build first`).toBe(true);
    const root = board();
    const { board: taskBoard } = await makeTeam(root);
    const unique = `${process.pid}${randomInt(1e6, 1e7)}`;
    const first = `300.${unique}1`;
    const second = `300.${unique}2`;
    const patterns = [`sleep ${first}`, `sleep ${second}`];
    const task = await taskBoard.create({ subject: 'Run a long command', description: 'Start the job.', role: 'engineer', by: 'test' });

    // The model behind the real SDK path: one bash call; a second request (never expected, the command
    // does not end) is held until the server closes.
    const server = await MessagesServer.start([
      ok(toolUseMessage('bash', { command: `sleep ${first} & echo started; sleep ${second}` })),
      (_request, context) => new Promise((resolve) => context.signal.addEventListener('abort', () => resolve(ok({})), { once: true })),
    ]);
    cleanups.push(() => server.close());

    const env: NodeJS.ProcessEnv = {};
    for (const [name, value] of Object.entries(process.env)) if (!name.startsWith('ANTHROPIC_') && !name.startsWith('AUTOTEAM_')) env[name] = value;
    const worker: ChildProcess = spawn(process.execPath, [CLI, 'worker', '--role', 'engineer', '--name', 'eng', '--dir', root], {
      cwd: root,
      env: { ...env, ANTHROPIC_API_KEY: 'sk-containment-test', ANTHROPIC_BASE_URL: server.url, POLL_INTERVAL: '30s', IDLE_TIMEOUT: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    worker.stdout!.on('data', (chunk) => (output += String(chunk)));
    worker.stderr!.on('data', (chunk) => (output += String(chunk)));
    const exited = new Promise<NodeJS.Signals | number | null>((resolve) => worker.on('exit', (code, signal) => resolve(signal ?? code)));
    cleanups.push(async () => {
      if (worker.exitCode === null && worker.signalCode === null) {
        worker.kill('SIGKILL');
        await exited;
      }
      // Whatever survived (only when the test failed): ours, by pid.
      for (const pattern of patterns) for (const pid of alive(pattern)) process.kill(pid, 'SIGKILL');
    });

    await until(() => alive(patterns[1]!).length > 0 && alive(patterns[0]!).length > 0, 'both sleeps running').catch(
      (error: Error) => {
        throw new Error(`${error.message}\nworker output:\n${output}\nserver errors: ${server.errors.join('; ')}`);
      },
    );
    expect(taskBoard.get(task.id)).toMatchObject({ status: 'in_progress', owner: 'eng' });
    expect(server.requests).toHaveLength(1);

    worker.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');

    await until(() => patterns.every((pattern) => alive(pattern).length === 0), 'both sleeps gone').catch((error: Error) => {
      const left = patterns.map((pattern) => `${pattern}: ${alive(pattern).join(',') || 'gone'}`).join('; ');
      throw new Error(`${error.message} (${left})`);
    });
  });
});

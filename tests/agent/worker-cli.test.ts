/**
 * `autoteam worker` as a user runs it: the built CLI (dist/, built before the tests run) in a
 * process of its own, with no API key, against a board other processes post to.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { RequestStore } from '../../src/core/board/requests.js';
import { LeadSession } from '../../src/core/lead/session.js';
import { makeTeam } from '../helpers/agent-team.js';
import { hang, startMessagesServer } from '../helpers/messages-server.js';
import { removeBoard, tempBoard, until } from '../helpers/agent-wait.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '..', '..');
const CLI = path.join(repoRoot, 'dist', 'cli', 'bundle', 'main.js');
const DIST_INDEX = pathToFileURL(path.join(repoRoot, 'dist', 'index.js')).href;
/** The worker's IDLE poll: an hour, past the test's ceiling, so every claim here came from a watcher event. */
const POLL = '60m';

const run = promisify(execFile);

/** The environment of a user without a key: nothing ANTHROPIC_* at all. */
function keylessEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  // Nor an IDLE_TIMEOUT of the shell's: each worker here is given its own, or none.
  for (const [name, value] of Object.entries(process.env)) if (!name.startsWith('ANTHROPIC_') && name !== 'IDLE_TIMEOUT') env[name] = value;
  return { ...env, ...extra };
}

interface RunningWorker {
  proc: ChildProcess;
  output: () => string;
  /** Resolves with [code, signal] when the process has exited. */
  exited: Promise<[number | null, NodeJS.Signals | null]>;
}

function startWorker(root: string, name: string, env: Record<string, string> = { IDLE_TIMEOUT: '0' }, flags: string[] = []): RunningWorker {
  const proc = spawn(process.execPath, [CLI, 'worker', '--role', 'engineer', '--name', name, '--dir', root, ...flags], {
    cwd: root,
    env: keylessEnv({ POLL_INTERVAL: POLL, ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  proc.stdout!.on('data', (chunk) => (output += String(chunk)));
  proc.stderr!.on('data', (chunk) => (output += String(chunk)));
  const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolve) => proc.on('exit', (code, signal) => resolve([code, signal])));
  return { proc, output: () => output, exited };
}

/** Waits for `pattern` in the worker's output; on timeout the error shows the output so far. */
async function waitForOutput(worker: RunningWorker, pattern: RegExp, what: string): Promise<void> {
  await until(() => pattern.test(worker.output()) || worker.proc.exitCode !== null, what).catch((error: Error) => {
    throw new Error(`${error.message}\nworker output:\n${worker.output()}`);
  });
  if (!pattern.test(worker.output())) throw new Error(`worker exited (${worker.proc.exitCode}) before ${what}:\n${worker.output()}`);
}

/** Posts a task from a separate Node process through the built library; returns its id. */
async function postFromAnotherProcess(root: string, task: Record<string, unknown>): Promise<number> {
  const script = `
    import { TaskBoard } from ${JSON.stringify(DIST_INDEX)};
    const task = await new TaskBoard(process.argv[1]).create(JSON.parse(process.argv[2]));
    console.log(task.id);
  `;
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script, root, JSON.stringify(task)], { cwd: root });
  return Number(stdout.trim());
}

describe('autoteam worker (built CLI, separate processes, no API key)', () => {
  let root = '';
  let worker: RunningWorker | null = null;

  beforeAll(() => {
    if (!fs.existsSync(CLI)) throw new Error(`${CLI} is missing: build first with 'npx tsc -p tsconfig.build.json'`);
  });

  afterEach(async () => {
    if (worker && worker.proc.exitCode === null && worker.proc.signalCode === null) {
      worker.proc.kill('SIGKILL');
      await worker.exited;
    }
    worker = null;
    removeBoard(root);
  });

  it('waits for work until stopped unless told how long (no lead starts it again), and says which', async () => {
    root = tempBoard('autoteam-worker-idle-');
    worker = startWorker(root, 'stayer', {});
    await waitForOutput(worker, /\[stayer\] idle/, "the worker's first idle");
    expect(worker.output()).toMatch(/^\[stayer\] engineer on .*; waits for work until stopped \(Ctrl\+C\)$/m);
    worker.proc.kill('SIGTERM');
    expect(await worker.exited).toEqual([0, null]);

    // A name the team refuses: one line, no banner before it.
    const refused = startWorker(root, 'lead', {});
    expect(await refused.exited).toEqual([2, null]);
    expect(refused.output().trim()).toBe("autoteam: 'lead' is the team lead's name");

    worker = startWorker(root, 'leaver', {}, ['--idle-timeout', '1s']);
    expect(await worker.exited).toEqual([0, null]);
    expect(worker.output()).toMatch(/^\[leaver\] engineer on .*; shuts down after 1\.0 s idle$/m);
    expect(worker.output()).toMatch(/\[leaver\] exited: idle for 1 s/);
  });

  it('says its question, and who answers it, where no lead shows it', async () => {
    root = tempBoard('autoteam-worker-asks-');
    await run(process.execPath, [CLI, 'post', '--dir', root, 'Write a Python script that organizes my Downloads folder by file type.'], { cwd: root, env: keylessEnv({}) });
    worker = startWorker(root, 'asker', { IDLE_TIMEOUT: '0' }, ['--role', 'analyst']);
    await waitForOutput(worker, /\[asker\] asks/, "the analyst's question");
    expect(worker.output()).toMatch(/^\[asker\] asks \(pipeline #1\): .+\? — a lead of this board answers it: autoteam in a folder of the board, its web board, or answer_question of autoteam mcp serve$/m);
    // `tasks` from another terminal says it too: the question holds the pipeline.
    const question = /^\[asker\] asks \(pipeline #1\): (.+\?) — /m.exec(worker.output())![1]!;
    // The question is shown as it goes out, and on the task just after.
    await until(() => (JSON.parse(fs.readFileSync(path.join(root, '.tasks', 'task_1.json'), 'utf8')) as { history: Array<{ event: string }> }).history.some((entry) => entry.event === 'asked'), "the question on task #1's history");
    const tasks = await run(process.execPath, [CLI, 'tasks', '--dir', root], { cwd: root, env: keylessEnv({}) });
    expect(tasks.stdout.trim().split('\n').at(-1)).toBe(`? #1 asker asks: ${question} — a lead of this board answers it: autoteam in a folder of the board, its web board, or answer_question of autoteam mcp serve`);
    // Its asker killed (no lead here reaps it; its task still says it holds it): nobody waits for the
    // answer, and whoever claims the task next asks afresh.
    worker.proc.kill('SIGKILL');
    expect(await worker.exited).toEqual([null, 'SIGKILL']);
    const after = await run(process.execPath, [CLI, 'tasks', '--dir', root], { cwd: root, env: keylessEnv({}) });
    expect(after.stdout).toMatch(/^\[>\] #1: .* @asker$/m);
    expect(after.stdout).not.toMatch(/^\? /m);
  });

  it('a post or a retry with no lead says the live workers pick it up, or which roles none of them has', async () => {
    root = tempBoard('autoteam-worker-covers-');
    worker = startWorker(root, 'builder', { IDLE_TIMEOUT: '0' }, ['--role', 'engineer']);
    await waitForOutput(worker, /\[builder\] idle/, "the worker's first idle");
    // Nobody at all: every role a pipeline needs.
    const nobody = tempBoard('autoteam-worker-covers-none-');
    const alone = await run(process.execPath, [CLI, 'post', '--dir', nobody, 'Write a Python script that counts the words in a text file.'], { cwd: nobody, env: keylessEnv({}) });
    removeBoard(nobody);
    expect(alone.stdout.trim().split('\n').at(-1)).toBe('no lead runs on this board: the tasks wait for one (autoteam; autoteam --auto < /dev/null works them and ends) or for workers (autoteam worker --role analyst, and one with --role engineer, and one with --role reviewer)');
    // An engineer alone: a pipeline also needs an analyst and a reviewer.
    const partly = await run(process.execPath, [CLI, 'post', '--dir', root, 'Write a Python script that counts the words in a text file.'], { cwd: root, env: keylessEnv({}) });
    expect(partly.stdout.trim().split('\n').at(-1)).toBe('no lead runs on this board: the tasks wait for one (autoteam; autoteam --auto < /dev/null works them and ends) or for workers (autoteam worker --role analyst, and one with --role reviewer)');
    await run(process.execPath, [CLI, 'cancel', '--dir', root, '1'], { cwd: root, env: keylessEnv({}) });
    worker.proc.kill('SIGTERM');
    expect(await worker.exited).toEqual([0, null]);
    // A worker of role any covers every role.
    worker = startWorker(root, 'generalist', { IDLE_TIMEOUT: '0' }, ['--role', 'any']);
    await waitForOutput(worker, /\[generalist\] idle/, "the worker's first idle");
    const retried = await run(process.execPath, [CLI, 'retry', '--dir', root, '1'], { cwd: root, env: keylessEnv({}) });
    expect(retried.stdout.trim().split('\n').at(-1)).toBe('no lead runs on this board: its live workers pick them up (autoteam tasks follows them); a clarifying question waits until a lead of this board answers it: autoteam in a folder of the board, its web board, or answer_question of autoteam mcp serve');
  });

  it('refuses a name the team would refuse before it makes a board: an empty folder stays empty', async () => {
    root = tempBoard('autoteam-worker-bad-name-');
    for (const [name, said] of [
      ['bad name', "autoteam: invalid teammate name 'bad name': name: letters, digits, _ and - only"],
      ['', "autoteam: invalid teammate name '': name: empty: a name is needed"],
      ['lead', "autoteam: 'lead' is the team lead's name"],
      ['Lead', "autoteam: 'Lead' differs from the team lead's name 'lead' only in case; names must differ in more than case; choose another name"],
    ]) {
      const refused = startWorker(root, name!, {});
      expect(await refused.exited).toEqual([2, null]);
      expect(refused.output().trim()).toBe(said);
      expect(fs.readdirSync(root)).toEqual([]);
    }
  });

  it('says the sandbox is off, and where that was set: the flag, or AUTOTEAM_SANDBOX in the board\'s .env', async () => {
    root = tempBoard('autoteam-worker-sandbox-off-');
    fs.writeFileSync(path.join(root, '.env'), 'AUTOTEAM_SANDBOX=off\n');
    worker = startWorker(root, 'loose', {}, ['--idle-timeout', '100ms']);
    expect(await worker.exited).toEqual([0, null]);
    expect(worker.output().split('\n')[0]).toBe(`autoteam: sandbox turned off (AUTOTEAM_SANDBOX=off in ${path.join(root, '.env')}): code the agents run is not contained`);
    worker = startWorker(root, 'loose', {}, ['--idle-timeout', '100ms', '--sandbox', 'off']);
    expect(await worker.exited).toEqual([0, null]);
    expect(worker.output().split('\n')[0]).toBe('autoteam: sandbox turned off (--sandbox off): code the agents run is not contained');
  });

  it('a worker killed with its task in hand and started again at once under its name hands that task back as it joins, not when the lease runs out', async () => {
    root = tempBoard('autoteam-worker-rejoin-');
    // Every model request hangs: the task stays in hand until the process dies.
    const server = await startMessagesServer([hang(), hang()]);
    const model = { ANTHROPIC_API_KEY: 'sk-test', ANTHROPIC_BASE_URL: server.url, IDLE_TIMEOUT: '0' };
    try {
      const { board } = await makeTeam(root);
      worker = startWorker(root, 'phoenix', model);
      await waitForOutput(worker, /\[phoenix\] idle/, "the worker's first idle");
      const id = await postFromAnotherProcess(root, { subject: 'Hold me', description: 'Say hello.', role: 'engineer', by: 'poster' });
      await until(() => server.requests.length === 1, 'the first run to ask the model');
      const first = worker;
      first.proc.kill('SIGKILL');
      expect(await first.exited).toEqual([null, 'SIGKILL']);
      const killedPid = first.proc.pid;

      // Started again before any lead could see the first one dead (no lead runs here at all).
      worker = startWorker(root, 'phoenix', model);
      await until(() => server.requests.length === 2, 'the second run to ask the model about the task');
      const task = await until(() => {
        const current = board.get(id);
        return current.claims === 2 ? current : null;
      }, `task #${id} claimed again`);
      expect(task).toMatchObject({ status: 'in_progress', owner: 'phoenix' });
      const ends = task.history.filter((entry) => entry.event !== 'created' && entry.event !== 'claimed');
      expect(ends).toEqual([expect.objectContaining({ event: 'released', detail: `owner phoenix (pid ${killedPid} on ${os.hostname()}) is gone: phoenix joined again` })]);
      expect(server.requests[1]!.rawBody).toContain('Hold me');
    } finally {
      if (worker && worker.proc.exitCode === null) {
        worker.proc.kill('SIGKILL');
        await worker.exited;
      }
      await server.close();
    }
  });

  it("a lead's /shutdown of a worker it does not run asks it through its inbox, and the worker leaves", async () => {
    root = tempBoard('autoteam-worker-shutdown-');
    worker = startWorker(root, 'far');
    await waitForOutput(worker, /\[far\] idle/, "the worker's first idle");
    const session = new LeadSession({ rootDir: root, model: { kind: 'offline', reason: 'test' } });
    try {
      await session.start([]);
      await expect(session.requestShutdownElsewhere('nobody')).rejects.toThrow(/^'nobody' is not a member of team '\S+' \(members: far\)$/);
      expect(await session.requestShutdownElsewhere('far')).toBe(`asked far (pid ${worker.proc.pid} on ${os.hostname()}) to shut down: it finishes its turn, hands back any task and leaves`);
      expect(await worker.exited).toEqual([0, null]);
      expect(worker.output()).toMatch(/\[far\] exited: shutdown requested by lead/);
      // Gone now: nothing more to ask.
      expect(await session.requestShutdownElsewhere('far')).toBeNull();
    } finally {
      await session.close(2_000);
    }
  });

  it('picks up general tasks posted from another process on the watcher event, not the poll, and completes them offline', async () => {
    root = tempBoard();
    const { board } = await makeTeam(root);
    worker = startWorker(root, 'eng');
    await waitForOutput(worker, /\[eng\] idle/, "the worker's first idle");
    expect(worker.output()).toContain('offline scripted model');

    for (let round = 1; round <= 3; round++) {
      const id = await postFromAnotherProcess(root, {
        subject: `Note ${round}`,
        description: `Run \`echo note number ${round} > note-${round}.txt\`.`,
        role: 'engineer',
        by: 'poster',
      });
      const done = await until(
        () => {
          const task = board.get(id);
          return task.status === 'completed' ? task : null;
        },
        `task #${id} completed`,
      );
      expect(done.owner).toBe('eng');
      expect(done.history[0]).toMatchObject({ event: 'created', by: 'poster' });
      expect(done.result).toMatch(/^`echo note number \d > note-\d\.txt`: exit 0/);
      const note = fs.readFileSync(path.join(root, 'workspace', 'general', `note-${round}.txt`), 'utf8');
      expect(note).toBe(`note number ${round}\n`);
      // One claim, well inside the hour-long poll: the watcher saw the other process's post.
      expect(done.history.filter((h) => h.event === 'claimed')).toHaveLength(1);
    }

    worker.proc.kill('SIGTERM');
    expect(await worker.exited).toEqual([0, null]);
  });

  it("says a hook's warning in its own output, as the lead's REPL does", async () => {
    root = tempBoard();
    const { board } = await makeTeam(root);
    fs.writeFileSync(
      path.join(root, 'autoteam.config.json'),
      JSON.stringify({ hooks: { PostToolUse: [{ matcher: 'bash', hooks: [{ type: 'command', command: 'echo post-hook-crash >&2; exit 1' }] }] } }),
    );
    worker = startWorker(root, 'eng');
    await waitForOutput(worker, /\[eng\] idle/, "the worker's first idle");
    const id = await postFromAnotherProcess(root, { subject: 'Note', description: 'Run `echo hi > note.txt`.', role: 'engineer' });
    await until(() => board.get(id).status === 'completed', `task #${id} completed`);
    await waitForOutput(worker, /\[eng\] hook PostToolUse \(echo post-hook-crash >&2; exit 1\): warn — post-hook-crash/, "the hook's warning");
  });

  it.each(['SIGTERM', 'SIGHUP'] as const)('%s mid-task hands the task back to the board and exits 0', async (signal) => {
    root = tempBoard();
    const { board, registry } = await makeTeam(root);
    worker = startWorker(root, 'eng');
    await waitForOutput(worker, /\[eng\] idle/, "the worker's first idle");
    // A plan nobody answers keeps the teammate mid-task, waiting, with its lease renewed.
    const id = await postFromAnotherProcess(root, {
      subject: 'Needs a plan',
      description: 'Run `ls` after approval.',
      role: 'engineer',
      artifacts: { requirePlan: true },
    });
    const requests = new RequestStore(root);
    await until(() => requests.list({ kind: 'plan', status: 'pending' }).length === 1, 'the plan request').catch(
      (error: Error) => {
        throw new Error(`${error.message}\nworker output:\n${worker!.output()}`);
      },
    );
    expect(board.get(id)).toMatchObject({ status: 'in_progress', owner: 'eng' });

    worker.proc.kill(signal);
    const [code, killedBy] = await worker.exited;

    expect({ code, killedBy, output: worker.output() }).toMatchObject({ code: 0, killedBy: null });
    const task = board.get(id);
    expect(task).toMatchObject({ status: 'pending', owner: null, lease: null });
    const released = task.history.at(-1)!;
    expect(released).toMatchObject({ event: 'released', by: 'eng' });
    expect(released.detail).toContain(signal);
    expect(registry.get('eng')).toMatchObject({ status: 'shutdown' });
    expect(worker.output()).toMatch(/\[eng\] exited: /);
  });
});

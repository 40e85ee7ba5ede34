import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { TeammateEvent } from '../../src/core/agent/teammate.js';
import type { Task } from '../../src/core/board/schemas.js';
import type { AgentChildConfig } from '../helpers/agent-child.js';
import { makeTeam, ManagerRig, startLocalTeammate, type LocalTeammate } from '../helpers/agent-team.js';
import { Actor } from '../helpers/board-spawn.js';
import { EventLog, removeBoard, tempBoard, until } from '../helpers/agent-wait.js';
import { FAKE_MODEL_PATH, FakeModel, type FakeModelOptions, reply, toolUse } from '../helpers/fake-model.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '..', '..');
const CHILD = path.join(repoRoot, 'tests', 'helpers', 'agent-child.ts');

function fake(options: FakeModelOptions) {
  return { kind: 'module' as const, path: FAKE_MODEL_PATH, options };
}

/**
 * A teammate in its own process (tests/helpers/agent-child.ts). `claimed` resolves on its 'working'
 * event, which comes after its registry write: a SIGKILL from then on cannot leave the team
 * registry locked (see the stale-lock test below for what happens when it does).
 */
function startChild(config: AgentChildConfig) {
  const proc = spawn(process.execPath, ['--import', 'tsx', CHILD, JSON.stringify(config)], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
  const events = new EventLog<TeammateEvent>();
  let stderr = '';
  proc.stderr!.on('data', (chunk) => (stderr += String(chunk)));
  readline.createInterface({ input: proc.stdout! }).on('line', (line) => {
    if (line.startsWith('{')) events.push(JSON.parse(line) as TeammateEvent);
  });
  const exited = new Promise<NodeJS.Signals | number | null>((resolve) => proc.on('exit', (code, signal) => resolve(signal ?? code)));
  const claimed = (task: number) =>
    events
      .waitFor((e) => e.type === 'status' && e.status === 'working' && e.task === task, `${config.name} claims #${task}`)
      .catch((error: Error) => {
        throw new Error(`${error.message}\nstderr: ${stderr}`);
      });
  return { proc, events, exited, claimed };
}

describe('a teammate thread that dies mid-task', () => {
  let root = '';
  let rig: ManagerRig | null = null;
  afterEach(async () => {
    await rig?.close();
    rig = null;
    removeBoard(root);
  });

  const crashes: Array<{ how: string; model: ReturnType<typeof fake>; code: number; why: RegExp; stack?: string; terminate?: boolean }> = [
    { how: 'process.exit from inside the model', model: fake({ script: 'exit', code: 7 }), code: 7, why: /thread died \(exit code 7\)/ },
    {
      how: 'an exception thrown outside the loop',
      model: fake({ script: 'throw-outside-loop', message: 'fake model exploded' }),
      code: 1,
      why: /thread died \(exit code 1\): fake model exploded/,
      stack: 'fake model exploded',
    },
    { how: 'the host terminating the thread', model: fake({ script: 'hang' }), code: 1, why: /thread died \(exit code 1\)/, terminate: true },
  ];

  for (const crash of crashes) {
    it(`${crash.how}: member marked dead, task back to pending at once, history says why`, async () => {
      root = tempBoard();
      const { board, registry } = await makeTeam(root);
      const task = await board.create({ subject: 'Fragile job', role: 'engineer' });
      rig = await ManagerRig.start(root, crash.model);
      const handle = rig.manager.spawn('eng', 'engineer');
      // The claim's line comes before the first model call, which may end the thread before its
      // `working` status has landed in the registry.
      await rig.events.waitFor((e) => e.type === 'activity' && e.text.startsWith(`claimed #${task.id} `), 'claim');
      if (crash.terminate) await handle.worker.terminate();

      const exit = await handle.exited;

      expect(exit).toMatchObject({ name: 'eng', kind: 'crashed', code: crash.code, released: [task.id] });
      expect(exit.reason).toMatch(crash.why);
      // The error and its stack are kept where the screen's one line points.
      expect(exit.crashLog).toMatch(/^\.team\/crash\/eng-\d{4}-\d\d-\d\dT[\d-]+Z\.log$/);
      const log = fs.readFileSync(path.join(root, exit.crashLog!), 'utf8');
      expect(log).toMatch(/^eng \(engineer\) died at .* — a worker thread of process \d+, exit code \d+\n/);
      expect(log).toContain(`handed back: #${task.id}`);
      expect(log).toContain(`activity: claimed #${task.id} Fragile job`);
      if (crash.stack) expect(log).toMatch(new RegExp(`error:\\nError: ${crash.stack}\\n\\s+at `));
      const member = registry.get('eng');
      expect(member).toMatchObject({ status: 'dead', task: null });
      expect(member!.reason).toMatch(crash.why);
      const after = board.get(task.id);
      expect(after).toMatchObject({ status: 'pending', owner: null, lease: null });
      const last = after.history.at(-1)!;
      expect(last).toMatchObject({ event: 'released', by: 'runtime' });
      expect(last.detail).toMatch(/^owner eng died: /);
      expect(last.detail).toMatch(crash.why);
      // Claimable again straight away: no lease to wait out.
      expect(board.scanUnclaimed('engineer').map((t) => t.id)).toEqual([task.id]);
    });
  }
});

describe('a teammate process that dies (as autoteam worker runs one)', () => {
  let root = '';
  afterEach(() => removeBoard(root));

  it('an error nothing caught: its stack in .team/crash, its task handed back, one line naming the log, exit 1', async () => {
    root = tempBoard();
    const { board } = await makeTeam(root);
    const task = await board.create({ subject: 'Fragile job', role: 'engineer' });
    let stderr = '';
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', CHILD, JSON.stringify({ name: 'eng', role: 'engineer', rootDir: root, model: fake({ script: 'throw-outside-loop', message: 'fake model exploded' }), settings: { pollMs: 60_000, idleTimeoutMs: 0 } })],
      { cwd: repoRoot, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    child.stderr!.on('data', (chunk) => (stderr += String(chunk)));
    const code = await new Promise<number | null>((resolve) => child.on('exit', (exitCode) => resolve(exitCode)));
    expect(code, stderr).toBe(1);
    const line = /^\[eng\] died: fake model exploded; handed back #(\d+) — details in (\.team\/crash\/eng-[\dTZ-]+\.log)$/m.exec(stderr);
    expect(line, stderr).not.toBeNull();
    expect(Number(line![1])).toBe(task.id);
    const log = fs.readFileSync(path.join(root, line![2]!), 'utf8');
    expect(log).toMatch(/^eng \(engineer\) died at .* — the autoteam worker process \d+\n/);
    expect(log).toMatch(/error:\nError: fake model exploded\n\s+at /);
    expect(board.get(task.id)).toMatchObject({ status: 'pending', owner: null });
  });
});

describe('a thread the host stops', () => {
  let root = '';
  let rig: ManagerRig | null = null;
  afterEach(async () => {
    await rig?.close();
    rig = null;
    removeBoard(root);
  });

  it('one still starting when asked to stop is terminated after the grace period: said so, not a crash', async () => {
    root = tempBoard();
    const { registry } = await makeTeam(root);
    rig = await ManagerRig.start(root, fake({ script: 'never-starts' }));
    rig.manager.spawn('eng', 'engineer');
    const exit = await rig.manager.stop('eng', 300);
    expect(exit).toMatchObject({ name: 'eng', kind: 'terminated', released: [] });
    expect(exit!.reason).toBe('terminated: it did not stop within 300 ms of being asked (it was still starting)');
    expect(exit!.crashLog).toBeUndefined();
    expect(fs.existsSync(path.join(root, '.team', 'crash'))).toBe(false);
    // It never joined the team: nothing to mark dead.
    expect(registry.get('eng')).toBeUndefined();
  });
});

describe('lease expiry takeover across processes', () => {
  let root = '';
  let child: ChildProcess | null = null;
  let second: LocalTeammate | null = null;
  afterEach(async () => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    child = null;
    await second?.halt();
    second = null;
    removeBoard(root);
  });

  it('SIGKILLed owner: its lease lapses, another teammate takes over, the zombie claim is fenced off', async () => {
    root = tempBoard();
    const { board } = await makeTeam(root);
    const task = await board.create({ subject: 'Long job', description: 'Takes a while.', role: 'engineer' });
    const LEASE_MS = 1_500;
    const config: AgentChildConfig = {
      name: 'eng1',
      role: 'engineer',
      rootDir: root,
      model: fake({ script: 'hang' }),
      settings: { leaseMs: LEASE_MS, pollMs: 60_000, idleTimeoutMs: 0 },
    };
    const eng1 = startChild(config);
    child = eng1.proc;
    await eng1.claimed(task.id);
    const claimed = board.get(task.id);
    expect(claimed).toMatchObject({ status: 'in_progress', owner: 'eng1', claims: 1, lease: { owner: 'eng1', token: 1 } });
    // The runtime renews the lease while the model hangs (the model never gets a say in it).
    await until(() => board.get(task.id).lease!.until !== claimed.lease!.until, 'a lease renewal');

    eng1.proc.kill('SIGKILL');
    expect(await eng1.exited).toBe('SIGKILL');
    const orphaned = board.get(task.id);
    expect(orphaned).toMatchObject({ status: 'in_progress', owner: 'eng1' });
    const until0 = Date.parse(orphaned.lease!.until);

    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const model = new FakeModel([
      async () => {
        await gate;
        return reply(toolUse('complete_task', { result: 'done by eng2' }));
      },
    ]);
    second = startLocalTeammate({ root, name: 'eng2', role: 'engineer', model, settings: { pollMs: 100, leaseMs: 10_000 } });
    // Nothing on disk changes when a lease lapses: eng2's poll is what finds it. (If the SIGKILL
    // landed inside a lease renewal, the task's lock is left behind and the takeover also waits
    // out its 10 s staleness.)
    const taken = await until(
      () => {
        const current = board.get(task.id);
        return current.owner === 'eng2' ? current : null;
      },
      'eng2 takes the task over',
    );
    const takeover = taken.history.at(-1)!;
    expect(takeover).toMatchObject({ by: 'eng2', event: 'claimed' });
    expect(takeover.detail).toBe('lease of eng1 expired; taken over (token 2)');
    expect(Date.parse(takeover.at)).toBeGreaterThan(until0);
    expect(taken).toMatchObject({ status: 'in_progress', claims: 2, lease: { owner: 'eng2', token: 2 } });

    // The zombie's late writes with its old claim are refused, and change nothing.
    const zombie = { owner: 'eng1', token: 1 };
    const late = await board.complete(task.id, zombie, 'zombie result');
    expect(late.ok).toBe(false);
    const lateUpdate = await board.update(task.id, { result: 'zombie' }, { fence: zombie, event: 'saved' });
    expect(lateUpdate.ok).toBe(false);
    const lateRenew = await board.renewLease(task.id, zombie);
    expect(lateRenew.ok).toBe(false);
    const untouched = board.get(task.id);
    expect({ ...untouched, lease: null, updatedAt: '' }).toEqual({ ...taken, lease: null, updatedAt: '' });

    release();
    const done: Task = await until(() => {
      const current = board.get(task.id);
      return current.status === 'completed' ? current : null;
    }, 'eng2 completes');
    expect(done).toMatchObject({ owner: 'eng2', result: 'done by eng2' });
    expect(done.history.filter((h) => h.event === 'completed').map((h) => h.by)).toEqual(['eng2']);
    model.assertDone();
  });

  it('a restarted teammate with the same name takes over and its old claim token is refused', async () => {
    root = tempBoard();
    const { board } = await makeTeam(root);
    const task = await board.create({ subject: 'Resumable job', role: 'engineer' });
    const config: AgentChildConfig = {
      name: 'eng1',
      role: 'engineer',
      rootDir: root,
      model: fake({ script: 'hang' }),
      settings: { leaseMs: 1_000, pollMs: 60_000, idleTimeoutMs: 0 },
    };
    const eng1 = startChild(config);
    child = eng1.proc;
    await eng1.claimed(task.id);
    expect(board.get(task.id)).toMatchObject({ owner: 'eng1', claims: 1 });
    eng1.proc.kill('SIGKILL');
    expect(await eng1.exited).toBe('SIGKILL');

    const model = new FakeModel([
      async (_call, request) => {
        // While the new claim is live, the dead process's claim (same name, token 1) can no longer write.
        const late = await board.complete(task.id, { owner: 'eng1', token: 1 }, 'zombie result');
        if (late.ok || !/token 1 was superseded by token 2/.test(late.reason)) throw new Error(`zombie write not fenced: ${JSON.stringify(late)}`);
        if (request.signal?.aborted) throw new Error('aborted');
        return reply(toolUse('complete_task', { result: 'resumed and done' }));
      },
    ]);
    second = startLocalTeammate({ root, name: 'eng1', role: 'engineer', model, settings: { pollMs: 100 } });
    const done = await until(() => {
      const current = board.get(task.id);
      return current.status === 'completed' ? current : null;
    }, 'the restarted eng1 completes');
    model.assertDone();
    expect(done).toMatchObject({ owner: 'eng1', claims: 2, result: 'resumed and done' });
    // Handed back as the new run joined (the record it replaced was another process's), not when the lease ran out.
    expect(done.history.filter((h) => h.event === 'released').map((h) => h.detail)).toEqual([`owner eng1 (pid ${eng1.proc.pid} on ${os.hostname()}) is gone: eng1 joined again`]);
    expect(done.history.some((h) => /expired; taken over/.test(h.detail ?? ''))).toBe(false);
  });

  it('a teammate started right after a process died holding the team registry lock still joins once the lock is stale', async () => {
    root = tempBoard();
    await makeTeam(root);
    // A process killed inside a registry write (join, setStatus) leaves `.team/config.json.lock`
    // behind; it counts as stale only after DEFAULT_LOCK_STALE_MS (10 s) without a refresh.
    const holder = Actor.process('registry-lock holder', { kind: 'hold-lock', file: path.join(root, '.team', 'config.json'), staleMs: 10_000 });
    await holder.waitFor('event', 'locked');
    holder.child!.kill('SIGKILL');
    await holder.exited;

    second = startLocalTeammate({ root, name: 'eng2', role: 'engineer', model: new FakeModel([]) });
    const joined = second.events
      .waitFor((e) => e.type === 'status' && e.status === 'idle', 'eng2 idle')
      .then(() => 'joined');
    const gaveUp = second.done.then(
      (reason) => `run() returned early: ${reason}`,
      (error: Error) => `run() failed: ${error.message}`,
    );
    expect(await Promise.race([joined, gaveUp])).toBe('joined');
  });
});

import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { threadsFor } from '../../src/core/agent/teammate-thread.js';
import { makeTeam, ManagerRig } from '../helpers/agent-team.js';
import { removeBoard, tempBoard } from '../helpers/agent-wait.js';
import { FAKE_MODEL_PATH, type FakeModelOptions } from '../helpers/fake-model.js';

function fake(options: FakeModelOptions) {
  return { kind: 'module' as const, path: FAKE_MODEL_PATH, options };
}

describe('threadsFor', () => {
  it('gives each teammate a thread while the cores go round, else its role a share of the cores', () => {
    // The default team: one of each role, a thread each, on any machine.
    expect(threadsFor(1, 3, 2)).toBe(1);
    expect(threadsFor(1, 3, 64)).toBe(1);
    // Four engineers among three roles: one thread on two cores, two on eight, four on sixteen.
    expect(threadsFor(4, 3, 2)).toBe(1);
    expect(threadsFor(4, 3, 8)).toBe(2);
    expect(threadsFor(4, 3, 16)).toBe(4);
    // A role alone on the machine has all its cores.
    expect(threadsFor(6, 1, 4)).toBe(4);
  });
});

describe('teammates of one role sharing a thread (real worker threads, one core shared out)', () => {
  let root = '';
  let rig: ManagerRig | null = null;
  afterEach(async () => {
    await rig?.close();
    rig = null;
    removeBoard(root);
  });

  it('work two tasks at once, and one stopped leaves while the other works on in the thread', async () => {
    root = tempBoard();
    const { board } = await makeTeam(root);
    rig = await ManagerRig.start(root, fake({ script: 'hang' }), {}, 1);
    const [one, two] = rig.manager.spawnTeam([
      { name: 'eng-1', role: 'engineer' },
      { name: 'eng-2', role: 'engineer' },
    ]);
    expect(one!.worker).toBe(two!.worker);
    await rig.events.waitFor((e) => e.type === 'status' && e.name === 'eng-1' && e.status === 'idle', 'eng-1 idle');
    await rig.events.waitFor((e) => e.type === 'status' && e.name === 'eng-2' && e.status === 'idle', 'eng-2 idle');
    const first = await board.create({ subject: 'First', role: 'engineer' });
    const second = await board.create({ subject: 'Second', role: 'engineer' });
    // Each model call hangs: both tasks held at once means the two teammates work side by side.
    const working = async (name: string) => (await rig!.events.waitFor((e) => e.type === 'status' && e.name === name && e.status === 'working', `${name} working`)) as { task: number };
    const tasks = [(await working('eng-1')).task, (await working('eng-2')).task].sort((a, b) => a - b);
    expect(tasks).toEqual([first.id, second.id]);

    const held = board.get(tasks[0]!).owner === 'eng-1' ? tasks[0]! : tasks[1]!;
    const exit = await rig.manager.stop('eng-1', 5_000);

    expect(exit).toMatchObject({ name: 'eng-1', kind: 'left', why: 'stopped' });
    expect(board.get(held)).toMatchObject({ status: 'pending', owner: null });
    // Its thread runs on for eng-2, whose task is still its own.
    expect(rig.manager.get('eng-1')).toBeUndefined();
    expect(rig.manager.get('eng-2')?.worker).toBe(two!.worker);
    const other = tasks.find((task) => task !== held)!;
    expect(board.get(other)).toMatchObject({ status: 'in_progress', owner: 'eng-2' });
    const settled = await Promise.race([two!.exited.then(() => 'exited'), new Promise((resolve) => setTimeout(resolve, 300, 'running'))]);
    expect(settled).toBe('running');
  });

  it("a process starting one role's teammates alone leaves the pipeline's other roles their share of the cores", async () => {
    root = tempBoard();
    await makeTeam(root);
    // Three cores, three stage roles: one thread for the engineers, though no analyst or reviewer starts here.
    rig = await ManagerRig.start(root, fake({ script: 'hang' }), {}, 3);
    const engineers = rig.manager.spawnTeam(['eng-1', 'eng-2', 'eng-3'].map((name) => ({ name, role: 'engineer' })));
    expect(new Set(engineers.map((handle) => handle.worker)).size).toBe(1);
    // Six cores: two threads, the engineers dealt round.
    const more = await ManagerRig.start(root, fake({ script: 'hang' }), {}, 6);
    try {
      const [a, b, c] = more.manager.spawnTeam(['eng-4', 'eng-5', 'eng-6'].map((name) => ({ name, role: 'engineer' })));
      expect(a!.worker).toBe(c!.worker);
      expect(a!.worker).not.toBe(b!.worker);
    } finally {
      await more.close();
    }
  });

  it('a thread that dies buries each of its teammates as crashed and hands back every task it held', async () => {
    root = tempBoard();
    const { board, registry } = await makeTeam(root);
    rig = await ManagerRig.start(root, fake({ script: 'hang' }), {}, 1);
    const [hangs] = rig.manager.spawnTeam([
      { name: 'eng-1', role: 'engineer' },
      { name: 'eng-2', role: 'engineer' },
    ]);
    await rig.events.waitFor((e) => e.type === 'status' && e.name === 'eng-1' && e.status === 'idle', 'eng-1 idle');
    await rig.events.waitFor((e) => e.type === 'status' && e.name === 'eng-2' && e.status === 'idle', 'eng-2 idle');
    const task = await board.create({ subject: 'Held when the thread dies', role: 'engineer' });
    await rig.events.waitFor((e) => e.type === 'status' && e.status === 'working' && e.task === task.id, 'claim');
    const exits = Promise.all([rig.manager.get('eng-1')!.exited, rig.manager.get('eng-2')!.exited]);

    await hangs!.worker.terminate();
    const [one, two] = await exits;

    for (const exit of [one!, two!]) {
      expect(exit).toMatchObject({ kind: 'crashed', why: 'crashed' });
      expect(registry.get(exit.name)).toMatchObject({ status: 'dead', task: null });
      expect(fs.existsSync(path.join(root, exit.crashLog!))).toBe(true);
    }
    expect([...one!.released, ...two!.released]).toEqual([task.id]);
    expect(board.get(task.id)).toMatchObject({ status: 'pending', owner: null, lease: null });
    // The crash log says which teammate of the thread did what.
    const log = fs.readFileSync(path.join(root, one!.crashLog!), 'utf8');
    expect(log).toMatch(/ eng-[12] status: working #\d+/);
  });

  it('one whose run throws is buried as crashed while the other works on in the thread', async () => {
    root = tempBoard();
    const { board, registry } = await makeTeam(root);
    // A live member of another process (this test's parent) holds the name: joining under it throws.
    await registry.heartbeat('taken', { name: 'taken', role: 'engineer', status: 'idle', task: null, pid: process.ppid });
    rig = await ManagerRig.start(root, fake({ script: 'hang' }), {}, 1);
    const [eng, taken] = rig.manager.spawnTeam([
      { name: 'eng', role: 'engineer' },
      { name: 'taken', role: 'engineer' },
    ]);
    expect(eng!.worker).toBe(taken!.worker);

    const exit = await taken!.exited;

    expect(exit).toMatchObject({ name: 'taken', kind: 'crashed', why: 'crashed', code: 0 });
    expect(exit.reason).toMatch(/^its run threw: 'taken' is already a live member of team/);
    const log = fs.readFileSync(path.join(root, exit.crashLog!), 'utf8');
    expect(log).toMatch(/^taken \(engineer\) died at .* — a worker thread of process \d+, which runs on for its other teammates\n/);
    // The thread runs on: its other teammate claims what is posted next.
    await rig.events.waitFor((e) => e.type === 'status' && e.name === 'eng' && e.status === 'idle', 'eng idle');
    const task = await board.create({ subject: 'After the crash', role: 'engineer' });
    await rig.events.waitFor((e) => e.type === 'status' && e.name === 'eng' && e.status === 'working' && e.task === task.id, 'eng claims');
    expect(rig.manager.get('eng')?.worker).toBe(eng!.worker);
  });

  it('one that does not stop ends its thread: the other is terminated with it, told why, and its task handed back', async () => {
    root = tempBoard();
    const { board } = await makeTeam(root);
    rig = await ManagerRig.start(root, fake({ script: 'hang' }), {}, 1);
    // `never-starts`: its model is never made, so a stop cannot reach it.
    rig.manager.spawnTeam([
      { name: 'stuck', role: 'engineer', model: fake({ script: 'never-starts' }) },
      { name: 'eng', role: 'engineer' },
    ]);
    await rig.events.waitFor((e) => e.type === 'status' && e.name === 'eng' && e.status === 'idle', 'eng idle');
    const task = await board.create({ subject: 'Held by the one that was not stuck', role: 'engineer' });
    await rig.events.waitFor((e) => e.type === 'status' && e.name === 'eng' && e.status === 'working' && e.task === task.id, 'eng claims');
    const sibling = rig.manager.get('eng')!.exited;

    const exit = await rig.manager.stop('stuck', 300);
    const other = await sibling;

    expect(exit).toMatchObject({ name: 'stuck', kind: 'terminated', why: 'terminated' });
    expect(exit!.reason).toMatch(/^terminated: it did not stop within 300 ms of being asked/);
    expect(other).toMatchObject({ name: 'eng', kind: 'terminated', why: 'terminated', released: [task.id], withThread: 'stuck' });
    expect(other.reason).toBe('terminated: its thread was ended to stop stuck, which did not stop within 300 ms of being asked');
    expect(board.get(task.id)).toMatchObject({ status: 'pending', owner: null });
  });
});

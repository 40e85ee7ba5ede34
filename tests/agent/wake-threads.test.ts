/**
 * A board change wakes one idle teammate per claimable task (BoardWakes), with real worker threads,
 * the real watcher and the offline model, and the idle poll an hour away: a task that is claimed at
 * all was claimed on a wake. What must hold is that no task is left unclaimed because the teammate
 * woken for it was busy claiming another.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { TaskBoard } from '../../src/core/board/index.js';
import { withLock } from '../../src/core/board/lock.js';
import { makeTeam, ManagerRig } from '../helpers/agent-team.js';
import { removeBoard, tempBoard, until } from '../helpers/agent-wait.js';

const OFFLINE = { kind: 'offline', reason: 'test' } as const;
/** A command that holds its teammate until the test creates GO in the shared workspace. */
const HELD = (n: number) => `Run \`until [ -f GO ]; do sleep 0.05; done; echo ${n} > OUT-${n}.txt\`.`;

describe('board wakes across teammate threads', () => {
  let root = '';
  let rig: ManagerRig | null = null;
  afterEach(async () => {
    await rig?.close();
    rig = null;
    removeBoard(root);
  });

  const claimed = (board: TaskBoard, ids: number[]) => ids.map((id) => board.get(id)).filter((task) => task.status === 'in_progress');

  it('tasks posted one right after another each reach an idle engineer of their own, with none left to the poll', async () => {
    root = tempBoard();
    const { board } = await makeTeam(root);
    rig = await ManagerRig.start(root, OFFLINE);
    for (const name of ['eng1', 'eng2', 'eng3', 'eng4']) await rig.spawnIdle(name, 'engineer');

    // Each post is a change of its own, landing while the engineer woken for the one before is claiming it.
    const ids: number[] = [];
    for (const n of [1, 2, 3]) ids.push((await board.create({ subject: `Held task ${n}`, description: HELD(n), role: 'engineer' })).id);

    // Every task is held until GO: three claimed at once means three engineers, each woken for one.
    await until(() => claimed(board, ids).length === 3, 'all three tasks claimed');
    const owners = claimed(board, ids).map((task) => task.owner);
    expect(new Set(owners).size).toBe(3);

    // The claim comes before the workspace is made; the commands wait in it for GO.
    await until(() => fs.existsSync(path.join(root, 'workspace', 'general')), 'the workspace made');
    fs.writeFileSync(path.join(root, 'workspace', 'general', 'GO'), '');
    await until(() => ids.every((id) => board.get(id).status === 'completed'), 'all three completed');
    for (const n of [1, 2, 3]) expect(fs.readFileSync(path.join(root, 'workspace', 'general', `OUT-${n}.txt`), 'utf8')).toBe(`${n}\n`);
  });

  it('a teammate back from work is woken for a new task while its status still waits for the team config\'s lock', async () => {
    root = tempBoard();
    const { board, registry } = await makeTeam(root);
    rig = await ManagerRig.start(root, OFFLINE);
    await rig.spawnIdle('eng1', 'engineer');
    const first = await board.create({ subject: 'Held task 1', description: HELD(1), role: 'engineer' });
    // The host has heard it works (its `working` landed in the team config).
    await rig.events.waitFor((e) => e.type === 'status' && e.name === 'eng1' && e.status === 'working', 'eng1 at work');

    // Another writer holds the team config's lock (kept fresh while held): no status of eng1's lands.
    let release = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    let holding = () => {};
    const held = new Promise<void>((resolve) => (holding = resolve));
    const lock = withLock(path.join(root, '.team', 'config.json'), async () => {
      holding();
      await released;
    });
    await held;
    try {
      await until(() => fs.existsSync(path.join(root, 'workspace', 'general')), 'the workspace made');
      fs.writeFileSync(path.join(root, 'workspace', 'general', 'GO'), '');
      await until(() => board.get(first.id).status === 'completed', 'the first task completed');
      // Each posted once the last is done, mostly after eng1 looked for work and found none: then only a
      // wake brings it (the poll is an hour away). Three rounds, so that the race is lost at least once.
      for (const n of [2, 3, 4]) {
        const next = await board.create({ subject: `Task ${n}`, description: `Run \`echo ${n} > OUT-${n}.txt\`.`, role: 'engineer' });
        await until(() => board.get(next.id).status === 'completed', `task ${n} done`);
        expect(board.get(next.id).owner).toBe('eng1');
      }
      // All while its statuses still waited for the lock: the wakes did not wait for the registry.
      expect(registry.get('eng1')).toMatchObject({ status: 'working', task: first.id });
    } finally {
      release();
      await lock;
    }
    await until(() => registry.get('eng1')?.status === 'idle', 'eng1 idle in the team config once the lock is free');
  });

  it('a teammate that finds its next task waiting goes straight on to it, and is idle only once none waits', async () => {
    root = tempBoard();
    const { board, registry } = await makeTeam(root);
    rig = await ManagerRig.start(root, OFFLINE);
    await rig.spawnIdle('eng1', 'engineer');
    const ids = [(await board.create({ subject: 'Held task 1', description: HELD(1), role: 'engineer' })).id, (await board.create({ subject: 'Held task 2', description: HELD(2), role: 'engineer' })).id];
    await until(() => fs.existsSync(path.join(root, 'workspace', 'general')), 'the workspace made');
    fs.writeFileSync(path.join(root, 'workspace', 'general', 'GO'), '');
    await until(() => ids.every((id) => board.get(id).status === 'completed'), 'both completed');
    await until(() => registry.get('eng1')?.status === 'idle', 'eng1 idle in the team config');
    const log = path.join(root, '.team', 'events.jsonl');
    const steps = () =>
      fs
        .readFileSync(log, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as { type: string; agent?: string; task?: number })
        .filter((event) => event.agent === 'eng1' && ['task_claimed', 'task_completed', 'teammate_idle', 'teammate_woke'].includes(event.type))
        .map((event) => (event.type.startsWith('task_') ? `${event.type} #${event.task}` : event.type));
    await until(() => steps().includes('teammate_idle'), 'its teammate_idle in the log');
    const [a, b] = steps()[0] === `task_claimed #${ids[0]}` ? ids : [ids[1], ids[0]];
    expect(steps()).toEqual([`task_claimed #${a}`, 'teammate_woke', `task_completed #${a}`, `task_claimed #${b}`, `task_completed #${b}`, 'teammate_idle']);
  });
});

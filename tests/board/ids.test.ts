import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { TaskBoard } from '../../src/core/board/index.js';
import { Actor, startTogether, tempRoot } from '../helpers/board-spawn.js';

const PER_CREATOR = 40;

describe('task ids', () => {
  let root = '';
  afterEach(() => {
    if (root) fs.rmSync(root, { recursive: true, force: true });
  });

  it('are unique and contiguous when several processes create at once', async () => {
    root = tempRoot();
    const board = new TaskBoard(root);
    const actors = [0, 1, 2].map((p) =>
      Actor.process<number[]>(`creator ${p}`, { kind: 'create', root, count: PER_CREATOR, by: `p${p}` }, true),
    );
    await startTogether(actors);
    const mine: number[] = [];
    const local = (async () => {
      for (let i = 0; i < PER_CREATOR; i++) mine.push((await board.create({ subject: `local ${i}`, by: 'local' })).id);
    })();
    const [remote] = await Promise.all([Promise.all(actors.map((actor) => actor.result)), local]);

    const all = [...mine, ...remote.flat()].sort((a, b) => a - b);
    const total = PER_CREATOR * 4;
    expect(all).toEqual(Array.from({ length: total }, (_, i) => i + 1));
    // Each creator saw its own ids rise.
    for (const ids of [mine, ...remote]) expect(ids).toEqual([...ids].sort((a, b) => a - b));
    // Every file holds the id its name says, and was written by whoever got that id.
    const byCreator = new Map<number, string>();
    mine.forEach((id) => byCreator.set(id, 'local'));
    remote.forEach((ids, p) => ids.forEach((id) => byCreator.set(id, `p${p}`)));
    const tasks = new TaskBoard(root).list();
    expect(tasks.map((task) => task.id)).toEqual(all);
    for (const task of tasks) expect(task.history[0]).toMatchObject({ event: 'created', by: byCreator.get(task.id) });
    expect((await board.create({ subject: 'after' })).id).toBe(total + 1);
  });
});

import { once } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BoardWatcher, Mailbox, TaskBoard, TeamRegistry, withLock } from '../../src/core/board/index.js';
import { Actor, tempRoot } from '../helpers/board-spawn.js';

describe('BoardWatcher', () => {
  let root = '';
  const watchers: BoardWatcher[] = [];
  afterEach(async () => {
    await Promise.all(watchers.splice(0).map((watcher) => watcher.close()));
    if (root) fs.rmSync(root, { recursive: true, force: true });
  });

  async function started(): Promise<{ watcher: BoardWatcher; counts: { board: number; inbox: string[] } }> {
    const watcher = new BoardWatcher(root);
    watchers.push(watcher);
    const counts = { board: 0, inbox: [] as string[] };
    watcher.on('board', () => counts.board++);
    watcher.on('inbox', (name) => counts.inbox.push(name));
    watcher.on('error', (error) => {
      throw error;
    });
    await watcher.start();
    return { watcher, counts };
  }

  it("emits 'board' when a task is created here or by another process", async () => {
    root = tempRoot();
    const { watcher } = await started();
    const board = new TaskBoard(root);

    const local = once(watcher, 'board');
    await board.create({ subject: 'local' });
    await local;

    const remote = once(watcher, 'board');
    const creator = Actor.process<number[]>('creator', { kind: 'create', root, count: 1, by: 'other' });
    expect(await creator.result).toEqual([2]);
    await remote;
    expect(board.list().map((t) => t.history[0]!.by)).toEqual(['lead', 'other']);
  });

  it("emits 'inbox' with the recipient's name after a send", async () => {
    root = tempRoot();
    const registry = new TeamRegistry(root);
    await registry.ensure('crew');
    await registry.join('bob', 'engineer');
    const { watcher } = await started();
    const arrived = once(watcher, 'inbox');
    await new Mailbox(root).send('lead', 'bob', 'hi');
    expect(await arrived).toEqual(['bob']);
  });

  it('reports the last of a burst of rewrites: a wake after it reads the final task', async () => {
    root = tempRoot();
    const board = new TaskBoard(root);
    const task = await board.create({ subject: 'rewrite 0' });
    const { watcher } = await started();
    const file = path.join(root, '.tasks', `task_${task.id}.json`);
    const seen: string[] = [];
    watcher.on('board', () => seen.push((JSON.parse(fs.readFileSync(file, 'utf8')) as { subject: string }).subject));
    const finalRead = new Promise<void>((resolve) => watcher.on('board', () => seen.at(-1) === 'rewrite 30' && resolve()));
    // Thirty rewrites in one turn of the event loop, each a new file renamed over the task, as the board writes.
    for (let i = 1; i <= 30; i++) {
      const json = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
      fs.writeFileSync(`${file}.tmp`, JSON.stringify({ ...json, subject: `rewrite ${i}` }));
      fs.renameSync(`${file}.tmp`, file);
    }
    await finalRead;
    // Coalesced: far fewer wakes than writes.
    expect(seen.length).toBeLessThan(30);
  });

  it("emits 'board' for a journal line alone: a reader woken by the rename may have read before the line came", async () => {
    root = tempRoot();
    const board = new TaskBoard(root);
    await board.create({ subject: 'first' });
    const { watcher } = await started();
    const woke = once(watcher, 'board');
    fs.appendFileSync(path.join(root, '.tasks', '.journal'), '1\n');
    await woke;
  });

  it('ignores lock directories, temp files and the id counter', async () => {
    root = tempRoot();
    const board = new TaskBoard(root);
    await board.create({ subject: 'existing' });
    const registry = new TeamRegistry(root);
    await registry.ensure('crew');
    const { counts } = await started();

    for (let i = 0; i < 50; i++) {
      await withLock(board.taskPath(1), () => {});
      fs.writeFileSync(path.join(board.dir, `task_1.json.${1000 + i}`), '{}');
      fs.rmSync(path.join(board.dir, `task_1.json.${1000 + i}`));
      fs.writeFileSync(path.join(board.dir, '.next-id'), `${i}\n`);
      fs.writeFileSync(path.join(board.dir, `notes-${i}.txt`), 'x');
    }
    await withLock(path.join(root, '.team', 'inbox', 'lead.jsonl'), () => {});
    // The sentinel: a real inbox change, made after every ignored one.
    const mailbox = new Mailbox(root);
    const watcher = watchers[0]!;
    const sentinel = once(watcher, 'inbox');
    await mailbox.send('lead', 'lead', 'sentinel');
    await sentinel;
    expect(counts.board).toBe(0);
    expect(counts.inbox).toEqual(['lead']);
  });

  it('stops emitting after close()', async () => {
    root = tempRoot();
    const { watcher, counts } = await started();
    const board = new TaskBoard(root);
    const first = once(watcher, 'board');
    await board.create({ subject: 'seen' });
    await first;
    const seen = counts.board;
    await watcher.close();

    // A second watcher is the witness that the change below did happen and was observable.
    const { watcher: witness } = await started();
    const observed = once(witness, 'board');
    await board.create({ subject: 'after close' });
    await observed;
    expect(counts.board).toBe(seen);
    await watcher.close();
  });
});

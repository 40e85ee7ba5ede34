import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TaskBoard } from '../../src/core/board/index.js';
import { Actor, tempRoot } from '../helpers/board-spawn.js';
import { lockPathOf } from '../../src/core/board/lock.js';

const STALE_MS = 2_000;

describe('a lock left by a killed process', () => {
  let root = '';
  let holder: Actor | null = null;
  afterEach(() => {
    if (holder?.child && holder.child.exitCode === null && holder.child.signalCode === null) holder.child.kill('SIGKILL');
    if (root) fs.rmSync(root, { recursive: true, force: true });
  });

  it('blocks claims while its holder lives; once the holder process is gone it is taken over within a second or so', async () => {
    root = tempRoot();
    const board = new TaskBoard(root, { lockStaleMs: STALE_MS * 5 });
    const task = await board.create({ subject: 'contended' });
    const lock = lockPathOf(board.taskPath(task.id));

    holder = Actor.process('lock holder', { kind: 'hold-lock', file: board.taskPath(task.id), staleMs: STALE_MS * 5 });
    await holder.waitFor('event', 'locked');
    expect(fs.existsSync(lock)).toBe(true);
    expect(JSON.parse(fs.readFileSync(lock, 'utf8'))).toMatchObject({ pid: holder.child!.pid });
    // Held well past a second by a live process: still refused.
    const until = Date.now() + 1_500;
    while (Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await board.claim(task.id, 'ann', { tryOnce: true })).toEqual({ ok: false, reason: `task #${task.id} is locked by another claimer` });

    holder.child!.kill('SIGKILL');
    expect(await holder.exited).toBe(-1);
    const killedAt = Date.now();
    const result = await board.claim(task.id, 'ann');
    expect(result).toMatchObject({ ok: true, task: { owner: 'ann', status: 'in_progress', claims: 1 } });
    // Not the 10 s stale period: the lock named a process of this host that is gone.
    expect(Date.now() - killedAt).toBeLessThan(STALE_MS * 2);
    expect(fs.existsSync(lock)).toBe(false);
  });

  it('a lock whose holder cannot be checked (another host) blocks until it goes stale, then is taken over', async () => {
    root = tempRoot();
    const board = new TaskBoard(root, { lockStaleMs: STALE_MS });
    const task = await board.create({ subject: 'contended' });
    const lock = lockPathOf(board.taskPath(task.id));
    fs.mkdirSync(path.dirname(lock), { recursive: true });
    const owner = path.join(path.dirname(lock), 'owner-4242-0-0badc0de');
    fs.writeFileSync(owner, `${JSON.stringify({ host: 'another-host', pid: 4242, thread: 0 })}\n`);
    fs.linkSync(owner, lock);
    const refreshedAt = new Date();
    fs.utimesSync(lock, refreshedAt, refreshedAt);
    expect(await board.claim(task.id, 'ann', { tryOnce: true })).toMatchObject({ ok: false });
    expect(board.get(task.id).status).toBe('pending');

    const deadline = Date.now() + 20_000;
    let result = await board.claim(task.id, 'ann');
    while (!result.ok && Date.now() < deadline) result = await board.claim(task.id, 'ann');
    expect(result).toMatchObject({ ok: true, task: { owner: 'ann', claims: 1 } });
    expect(Date.now() - refreshedAt.getTime()).toBeGreaterThanOrEqual(STALE_MS);
    expect(fs.existsSync(lock)).toBe(false);
  });
});

import fs from 'node:fs';
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

  it('blocks claims until it goes stale, then is taken over', async () => {
    root = tempRoot();
    const board = new TaskBoard(root, { lockStaleMs: STALE_MS });
    const task = await board.create({ subject: 'contended' });
    const lockDir = lockPathOf(board.taskPath(task.id));

    holder = Actor.process('lock holder', { kind: 'hold-lock', file: board.taskPath(task.id), staleMs: STALE_MS });
    await holder.waitFor('event', 'locked');
    expect(fs.existsSync(lockDir)).toBe(true);
    const whileAlive = await board.claim(task.id, 'ann', { tryOnce: true });
    expect(whileAlive).toEqual({ ok: false, reason: `task #${task.id} is locked by another claimer` });

    holder.child!.kill('SIGKILL');
    expect(await holder.exited).toBe(-1);
    expect(holder.child!.signalCode).toBe('SIGKILL');
    // The holder died without releasing. Pin the lock's last refresh to now, as if it had refreshed
    // just before dying, so "not stale yet" does not depend on how fast this machine is.
    const refreshedAt = new Date();
    fs.utimesSync(lockDir, refreshedAt, refreshedAt);
    const rightAfter = await board.claim(task.id, 'ann', { tryOnce: true });
    expect(rightAfter.ok).toBe(false);
    expect(board.get(task.id).status).toBe('pending');

    const deadline = Date.now() + 20_000;
    let result = rightAfter;
    let attempts = 0;
    while (!result.ok && Date.now() < deadline) {
      result = await board.claim(task.id, 'ann');
      attempts++;
    }
    expect(result).toMatchObject({ ok: true, task: { owner: 'ann', status: 'in_progress', claims: 1 } });
    expect(Date.now() - refreshedAt.getTime()).toBeGreaterThanOrEqual(STALE_MS);
    expect(attempts).toBeGreaterThanOrEqual(1);
    expect(fs.existsSync(lockDir)).toBe(false);
    expect(board.get(task.id).owner).toBe('ann');
  });
});

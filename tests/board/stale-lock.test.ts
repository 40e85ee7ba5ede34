import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TaskBoard } from '../../src/core/board/index.js';
import { lockPathOf } from '../../src/core/board/lock.js';
import { until } from '../helpers/agent-wait.js';
import { Actor, tempRoot } from '../helpers/board-spawn.js';

/**
 * The stale period in these tests: an hour, so within a test a lock goes stale only when its mtime
 * is dated back, and a takeover without that can only be the holder's process being gone.
 */
const STALE_MS = 3_600_000;

/** The state letter of a process in /proc (R, S, T for stopped, Z, …). */
function processState(pid: number): string {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
}

function dateBack(file: string, ms: number): void {
  const then = new Date(Date.now() - ms);
  fs.utimesSync(file, then, then);
}

describe('a lock left by a killed process', () => {
  let root = '';
  let holder: Actor | null = null;
  afterEach(() => {
    if (holder?.child && holder.child.exitCode === null && holder.child.signalCode === null) holder.child.kill('SIGKILL');
    if (root) fs.rmSync(root, { recursive: true, force: true });
  });

  it('blocks claims while its holder lives, even stalled; once the holder process is gone it is taken over at once, not when stale', async () => {
    root = tempRoot();
    const board = new TaskBoard(root, { lockStaleMs: STALE_MS });
    const task = await board.create({ subject: 'contended' });
    const lock = lockPathOf(board.taskPath(task.id));

    holder = Actor.process('lock holder', { kind: 'hold-lock', file: board.taskPath(task.id), staleMs: STALE_MS });
    await holder.waitFor('event', 'locked');
    expect(fs.existsSync(lock)).toBe(true);
    const pid = holder.child!.pid!;
    expect(JSON.parse(fs.readFileSync(lock, 'utf8'))).toMatchObject({ pid });
    // Stopped, the holder no longer refreshes its lock; dated a minute back, the lock is past the
    // second after which a claimer asks whether its holder's process lives. It does: still refused.
    holder.child!.kill('SIGSTOP');
    await until(() => processState(pid) === 'T', 'the holder stopped');
    dateBack(lock, 60_000);
    expect(await board.claim(task.id, 'ann', { tryOnce: true })).toEqual({ ok: false, reason: `task #${task.id} is locked by another claimer` });

    holder.child!.kill('SIGKILL');
    expect(await holder.exited).toBe(-1);
    // An hour from stale: only the holder being gone lets this claim through.
    const result = await board.claim(task.id, 'ann');
    expect(result).toMatchObject({ ok: true, task: { owner: 'ann', status: 'in_progress', claims: 1 } });
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
    dateBack(lock, 0);
    expect(await board.claim(task.id, 'ann', { tryOnce: true })).toMatchObject({ ok: false });
    // Half the stale period without a refresh: its holder may still be working on that host.
    dateBack(lock, STALE_MS / 2);
    expect(await board.claim(task.id, 'ann', { tryOnce: true })).toMatchObject({ ok: false });
    expect(board.get(task.id).status).toBe('pending');

    dateBack(lock, STALE_MS + 60_000);
    expect(await board.claim(task.id, 'ann', { tryOnce: true })).toMatchObject({ ok: true, task: { owner: 'ann', claims: 1 } });
    expect(fs.existsSync(lock)).toBe(false);
  });
});

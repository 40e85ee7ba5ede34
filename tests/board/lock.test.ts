/**
 * The lock itself: a hard link to the holder's owner file, what a held lock looks like on disk, how
 * owner files of finished processes are tidied, and that a directory lock (an older autoteam, or a
 * filesystem without hard links) is honoured.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { lockPathOf, withLock } from '../../src/core/board/lock.js';
import { TaskBoard } from '../../src/core/board/task-board.js';
import { holdLock } from '../helpers/held-lock.js';
import { until } from '../helpers/agent-wait.js';

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) fs.rmSync(root, { recursive: true, force: true });
});

function folder(): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-lock-'));
  roots.push(root);
  return root;
}

/** The pid of a process that has exited (and so is no one's). */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(child.stdout);
}

describe('withLock', () => {
  it("holds a hard link to this thread's owner file, which says whose it is, and removes only the link", async () => {
    const file = path.join(folder(), 'thing.json');
    const lock = lockPathOf(file);
    const seen = await withLock(file, () => {
      const stat = fs.statSync(lock);
      const owners = fs.readdirSync(path.dirname(lock)).filter((name) => name.startsWith('owner-'));
      return { isFile: stat.isFile(), nlink: stat.nlink, owners, owner: JSON.parse(fs.readFileSync(lock, 'utf8')) };
    });
    expect(seen).toMatchObject({ isFile: true, nlink: 2, owners: [expect.stringMatching(new RegExp(`^owner-${process.pid}-0-[0-9a-f]{8}$`))] });
    expect(seen.owner).toMatchObject({ host: os.hostname(), pid: process.pid, thread: 0 });
    expect(fs.existsSync(lock)).toBe(false);
    const owner = path.join(path.dirname(lock), seen.owners[0]!);
    expect(fs.statSync(owner).nlink).toBe(1);
  });

  it('serialises holders in one thread, and a try-lock on a held lock fails with ELOCKED', async () => {
    const file = path.join(folder(), 'counter');
    const order: string[] = [];
    let release!: () => void;
    const first = withLock(file, () => new Promise<void>((resolve) => {
      order.push('first in');
      release = () => {
        order.push('first out');
        resolve();
      };
    }));
    await expect(withLock(file, () => 'never', { retries: 0 })).rejects.toMatchObject({ code: 'ELOCKED' });
    const second = withLock(file, () => order.push('second in'));
    // What the waiting second holder does on each retry, done here a number of times instead of
    // giving it some milliseconds: every attempt finds the lock held.
    for (let attempt = 0; attempt < 20; attempt++) await expect(withLock(file, () => 'never', { retries: 0 })).rejects.toMatchObject({ code: 'ELOCKED' });
    expect(order).toEqual(['first in']);
    release();
    await Promise.all([first, second]);
    expect(order).toEqual(['first in', 'first out', 'second in']);
  });

  it("tidies what a process that is gone left: its locks, its owner files and old temp files — not a live process's", async () => {
    const root = folder();
    const dir = path.join(root, '.locks');
    fs.mkdirSync(dir);
    const owner = (pid: number, thread: number, host = os.hostname()) => {
      const file = path.join(dir, `owner-${pid}-${thread}-deadbeef`);
      fs.writeFileSync(file, `${JSON.stringify({ host, pid, thread })}\n`);
      return file;
    };
    const pid = deadPid();
    const gone = owner(pid, 0);
    const goneHolding = owner(pid, 1);
    const live = owner(process.ppid, 3);
    const elsewhere = owner(pid, 4, 'another-host');
    // A lock the dead process still held, and one a live process holds.
    fs.linkSync(goneHolding, path.join(dir, 'left.json.lock'));
    fs.linkSync(live, path.join(dir, 'held.json.lock'));
    // Temp files of writes that never reached their rename: an old one, and one being written now.
    const oldTemp = path.join(root, `config.json.${pid}.0.1a2b3c4d.tmp`);
    const newTemp = path.join(root, `config.json.${process.pid}.0.5e6f7a8b.tmp`);
    fs.writeFileSync(oldTemp, '');
    fs.writeFileSync(newTemp, '');
    const longAgo = new Date(Date.now() - 120_000);
    fs.utimesSync(oldTemp, longAgo, longAgo);

    await withLock(path.join(root, 'thing.json'), () => undefined);
    const left = fs.readdirSync(dir);
    expect(left).not.toContain(path.basename(gone));
    expect(left).not.toContain(path.basename(goneHolding));
    expect(left).not.toContain('left.json.lock');
    expect(left).toEqual(expect.arrayContaining([path.basename(live), 'held.json.lock', path.basename(elsewhere)]));
    expect(fs.existsSync(oldTemp)).toBe(false);
    expect(fs.existsSync(newTemp)).toBe(true);
  });

  it('a lock directory (an older autoteam) is honoured while fresh and taken over once stale', async () => {
    const file = path.join(folder(), 'thing.json');
    const lock = lockPathOf(file);
    fs.mkdirSync(lock, { recursive: true });
    await expect(withLock(file, () => 'got it', { retries: 0, staleMs: 2_000 })).rejects.toMatchObject({ code: 'ELOCKED' });
    const old = new Date(Date.now() - 5_000);
    fs.utimesSync(lock, old, old);
    expect(await withLock(file, () => fs.statSync(lock).isFile(), { retries: 0, staleMs: 2_000 })).toBe(true);
    expect(fs.existsSync(lock)).toBe(false);
  });

  it('a held lock stays fresh past the stale threshold: the holder keeps its mtime current', async () => {
    const file = path.join(folder(), 'slow.json');
    const lock = lockPathOf(file);
    await withLock(
      file,
      async () => {
        // Dated an hour back, far past stale, twice over: each time the holder's refresh brings it back.
        for (const round of [1, 2]) {
          const old = new Date(Date.now() - 3_600_000);
          fs.utimesSync(lock, old, old);
          await until(() => fs.statSync(lock).mtimeMs > old.getTime() + 60_000, `refresh ${round} of the held lock`);
        }
      },
      { staleMs: 2_000 },
    );
    expect(fs.existsSync(lock)).toBe(false);
  });

  it("a board-wide lock's patient wait outlasts the lock file's retries while a live holder holds it, and runs once it lets go", async () => {
    const board = new TaskBoard(folder(), { lockStaleMs: 2_000 });
    fs.mkdirSync(path.join(board.rootDir, '.tasks'), { recursive: true });
    const { release, done } = await holdLock(board, 'merge-queue');
    const started = Date.now();
    let ran = false;
    let settled = false;
    const patient = board.withLock('merge-queue', async () => void (ran = true), { patient: true }).finally(() => (settled = true));
    // The same wait, not patient, gives up while the holder lives (its retries are sized to take over a dead holder's lock).
    await expect(board.withLock('merge-queue', async () => undefined)).rejects.toMatchObject({ code: 'ELOCKED' });
    // Past the longest such wait (37 retries of 2–120 ms back-off, each up to doubled by its jitter: under 7 s), the patient one still waits.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, 7_200 - (Date.now() - started))));
    expect([ran, settled]).toEqual([false, false]);
    release();
    await Promise.all([done, patient]);
    expect(ran).toBe(true);
  });
});

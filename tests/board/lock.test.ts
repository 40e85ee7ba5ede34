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
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(order).toEqual(['first in']);
    release();
    await Promise.all([first, second]);
    expect(order).toEqual(['first in', 'first out', 'second in']);
  });

  it("tidies owner files of processes that are gone, but not one a lock still links to, nor a live process's", async () => {
    const dir = path.join(folder(), '.locks');
    fs.mkdirSync(dir);
    const pid = deadPid();
    const gone = path.join(dir, `owner-${pid}-0-deadbeef`);
    const goneButLinked = path.join(dir, `owner-${pid}-1-deadbeef`);
    const live = path.join(dir, `owner-${process.ppid}-3-0a0a0a0a`);
    for (const owner of [gone, goneButLinked, live]) fs.writeFileSync(owner, '{}\n');
    // A lock left by the dead process: stale only later, so it must keep its owner file.
    fs.linkSync(goneButLinked, path.join(dir, 'other.json.lock'));

    await withLock(path.join(path.dirname(dir), 'thing.json'), () => undefined);
    const left = fs.readdirSync(dir).sort();
    expect(left).toContain(path.basename(goneButLinked));
    expect(left).toContain(path.basename(live));
    expect(left).toContain('other.json.lock');
    expect(left).not.toContain(path.basename(gone));
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
    const ages = await withLock(
      file,
      async () => {
        const samples: number[] = [];
        const until = Date.now() + 2_600;
        while (Date.now() < until) {
          await new Promise((resolve) => setTimeout(resolve, 200));
          samples.push(Date.now() - fs.statSync(lock).mtimeMs);
        }
        return samples;
      },
      { staleMs: 2_000 },
    );
    expect(Math.max(...ages)).toBeLessThan(2_000);
  });
});

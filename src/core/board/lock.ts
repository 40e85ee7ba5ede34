import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { threadId } from 'node:worker_threads';
import { TEMP_FILE } from './atomic-io.js';
import { pidAlive } from './pid.js';

export interface LockOptions {
  /** How long a lock may go without a refresh before another process may take it over. */
  staleMs?: number;
  /** Attempts after the first; 0 makes this a try-lock. */
  retries?: number;
  /** Told once, when the first attempt finds the lock held and the wait begins. */
  onBusy?: () => void;
  /** Ends the wait (the lock not taken, `fn` not run) with an AbortError. */
  signal?: AbortSignal;
}

export const DEFAULT_LOCK_STALE_MS = 10_000;
/** Below this a live holder's refresh could lose the race with a taker. */
const MIN_STALE_MS = 2_000;
/** An owner file no lock links to is removed after this long, or at once if its process is gone. */
const OWNER_IDLE_MS = 3_600_000;

/**
 * Runs `fn` while holding the lock on `file` (the file need not exist). The lock is
 * `.locks/<name>.lock` beside the file: a hard link to this thread's owner file, so taking a lock is
 * one `link` and releasing it one `unlink` — no inode is created or freed, which on ext4 costs
 * ~0.4 ms of kernel time each (a mkdir/rmdir lock cost more than the rest of a claim). Whoever holds
 * it keeps the owner file's mtime fresh; a lock whose mtime is older than `staleMs` (its holder was
 * killed) is taken over, and one dated further in the future than that (a wrong clock, a copied board)
 * is removed at once, since it would never look stale. On a filesystem without hard links the lock is
 * a directory, as before.
 *
 * The first attempt is synchronous; only a busy lock waits, with jittered back-off (2–120 ms).
 */
export async function withLock<T>(file: string, fn: () => T | Promise<T>, options: LockOptions = {}): Promise<T> {
  const stale = Math.max(options.staleMs ?? DEFAULT_LOCK_STALE_MS, MIN_STALE_MS);
  // Keep retrying past the stale threshold, so a lock left by a killed process is taken over
  // instead of failing the caller (120 ms is the longest back-off step).
  const retries = options.retries ?? Math.ceil((stale * 1.5) / 120) + 12;
  const lockPath = lockPathOf(file);
  let held = tryLock(lockPath, stale);
  if (!held && retries > 0) options.onBusy?.();
  for (let attempt = 0, wait = 2; !held; attempt++, wait = Math.min(wait * 1.5, 120)) {
    if (attempt >= retries) throw busy(lockPath);
    // An AbortError as soon as the signal aborts (node:timers/promises).
    await sleep(wait * (1 + Math.random()), undefined, { signal: options.signal });
    held = tryLock(lockPath, stale);
  }
  try {
    return await fn();
  } finally {
    held.release();
  }
}

/**
 * Lock files live in `.locks/` beside the file, not next to it: every link/unlink takes the parent
 * directory's inode lock in the kernel, and the task files' own directory is busy enough with the
 * atomic renames.
 */
export function lockPathOf(file: string): string {
  return path.join(path.dirname(file), '.locks', `${path.basename(file)}.lock`);
}

export function isLockBusy(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === 'ELOCKED';
}

function busy(lockPath: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`lock ${lockPath} is held by another process`), { code: 'ELOCKED', file: lockPath });
}

interface Held {
  release(): void;
}

/** One attempt: the lock, or null when someone else holds a live one. */
function tryLock(lockPath: string, stale: number): Held | null {
  for (let attempt = 0; attempt < 3; attempt++) {
    const dir = path.dirname(lockPath);
    const owner = ownerIn(dir);
    owner?.freshen(stale);
    try {
      if (owner) fs.linkSync(owner.file, lockPath);
      else fs.mkdirSync(lockPath);
      return owner ? owner.hold(lockPath) : dirLock(lockPath);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') {
        // The .locks folder, or this thread's owner file (removed as idle by another process), is gone.
        owners.delete(dir);
        continue;
      }
      if (owner && (code === 'EPERM' || code === 'ENOTSUP' || code === 'EOPNOTSUPP' || code === 'EMLINK')) {
        owners.set(dir, null); // no hard links here: directory locks from now on
        continue;
      }
      if (code !== 'EEXIST') throw error;
      if (!takeOverIfStale(lockPath, stale)) return null;
    }
  }
  return null;
}

/**
 * Removes the lock at `lockPath` if its holder stopped refreshing it, or (held over a second) if its
 * holder's process is gone from this host; true when it is gone.
 */
function takeOverIfStale(lockPath: string, stale: number): boolean {
  const stat = fs.lstatSync(lockPath, { throwIfNoEntry: false });
  if (!stat) return true; // released meanwhile
  const age = Date.now() - stat.mtimeMs;
  if (age < stale && age > -stale && !(age > 1_000 && stat.isFile() && holderGone(lockPath))) return false;
  fs.rmSync(lockPath, { recursive: true, force: true });
  return true;
}

/** True when the owner file (or a lock linked to it) names a process of this host that is gone. */
function holderGone(file: string): boolean {
  try {
    const owner = JSON.parse(fs.readFileSync(file, 'utf8')) as { host?: unknown; pid?: unknown };
    return owner.host === os.hostname() && typeof owner.pid === 'number' && owner.pid !== process.pid && !pidAlive(owner.pid);
  } catch {
    return false;
  }
}

/**
 * This thread's owner file in one `.locks` folder: what its locks link to. Its mtime is every one of
 * its locks' last refresh, kept fresh while any is held; its content says whose it is.
 */
class Owner {
  private holds = 0;
  private touchedAt = 0;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    readonly file: string,
    private readonly ino: number,
  ) {}

  hold(lockPath: string): Held {
    if (this.holds++ === 0) {
      this.timer = setInterval(() => this.touch(), MIN_STALE_MS / 4);
      this.timer.unref();
    }
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        if (--this.holds === 0 && this.timer) clearInterval(this.timer);
        // Still ours? A holder that stalled past `stale` may have been taken over; that lock is not ours to remove.
        if (fs.lstatSync(lockPath, { throwIfNoEntry: false })?.ino !== this.ino) return;
        try {
          fs.unlinkSync(lockPath);
        } catch {
          // Gone already.
        }
      },
    };
  }

  /** Called before each link: a lock must look fresh from the moment it exists. */
  freshen(stale: number): void {
    if (Date.now() - this.touchedAt > stale / 4) this.touch();
  }

  private touch(): void {
    const now = new Date();
    try {
      fs.utimesSync(this.file, now, now);
      this.touchedAt = now.getTime();
    } catch {
      // Removed by another process's tidy-up: the next link fails with ENOENT and makes a new one.
    }
  }
}

/** Per thread (each worker thread has its own module instance): locks folder → owner, or null for directory locks. */
const owners = new Map<string, Owner | null>();

function ownerIn(dir: string): Owner | null {
  let owner = owners.get(dir);
  if (owner === undefined) {
    fs.mkdirSync(dir, { recursive: true });
    tidy(dir);
    const file = path.join(dir, `owner-${process.pid}-${threadId}-${randomUUID().slice(0, 8)}`);
    fs.writeFileSync(file, `${JSON.stringify({ host: os.hostname(), pid: process.pid, thread: threadId, since: new Date().toISOString() })}\n`, { flag: 'wx' });
    owner = new Owner(file, fs.statSync(file).ino);
    owners.set(dir, owner);
  }
  return owner;
}

/**
 * What dead writers left in a locks folder and beside it: locks held by processes of this host that
 * are gone (and their owner files), owner files unused for an hour, and temp files of writes that never
 * reached their rename (over a minute old).
 */
function tidy(dir: string): void {
  const names = fs.readdirSync(dir);
  const gone = new Set<number>();
  for (const name of names) {
    if (!name.startsWith('owner-')) continue;
    const file = path.join(dir, name);
    const stat = fs.statSync(file, { throwIfNoEntry: false });
    if (!stat) continue;
    if (holderGone(file)) gone.add(stat.ino);
    else if (stat.nlink === 1 && Date.now() - stat.mtimeMs > OWNER_IDLE_MS) fs.rmSync(file, { force: true });
  }
  for (const name of gone.size ? names : []) {
    const file = path.join(dir, name);
    if ((name.endsWith('.lock') || name.startsWith('owner-')) && gone.has(fs.lstatSync(file, { throwIfNoEntry: false })?.ino ?? -1)) fs.rmSync(file, { force: true });
  }
  const parent = path.dirname(dir);
  for (const name of fs.readdirSync(parent)) {
    if (!TEMP_FILE.test(name)) continue;
    const file = path.join(parent, name);
    const stat = fs.statSync(file, { throwIfNoEntry: false });
    if (stat && Date.now() - stat.mtimeMs > 60_000) fs.rmSync(file, { force: true });
  }
}

/** A directory lock (filesystems without hard links): its own mtime is its refresh. */
function dirLock(lockPath: string): Held {
  const timer = setInterval(() => {
    const now = new Date();
    fs.utimes(lockPath, now, now, () => {});
  }, MIN_STALE_MS / 4);
  timer.unref();
  return {
    release: () => {
      clearInterval(timer);
      fs.rmSync(lockPath, { recursive: true, force: true });
    },
  };
}

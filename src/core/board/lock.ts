import fs from 'node:fs';
import path from 'node:path';
import lockfile from 'proper-lockfile';

export interface LockOptions {
  /** How long a lock may go without a refresh before another process may take it over. */
  staleMs?: number;
  /** Attempts after the first; 0 makes this a try-lock. */
  retries?: number;
  onCompromised?: (error: Error) => void;
}

export const DEFAULT_LOCK_STALE_MS = 10_000;

/**
 * Runs `fn` while holding a proper-lockfile lock on `file` (the file need not exist).
 * The first attempt is synchronous (an uncontended lock costs one mkdir, no thread-pool round
 * trips); only a busy lock falls back to the async retries, which back off with jitter. A
 * compromised lock is reported, never thrown: the default handler throws from a timer and kills
 * the whole thread.
 */
export async function withLock<T>(file: string, fn: () => T | Promise<T>, options: LockOptions = {}): Promise<T> {
  const stale = options.staleMs ?? DEFAULT_LOCK_STALE_MS;
  // Keep retrying past the stale threshold, so a lock left by a killed process is taken over
  // instead of failing the caller (120 ms is the longest back-off step).
  const retries = options.retries ?? Math.ceil((stale * 1.5) / 120) + 12;
  const base = {
    realpath: false,
    stale,
    onCompromised: options.onCompromised ?? (() => {}),
    lockfilePath: lockPathOf(file),
  };
  let release: () => unknown;
  try {
    release = lockSyncMakingDir(file, base);
  } catch (error) {
    if (!isLockBusy(error)) throw error;
    // A lock dated in the future (a clock set wrong, a copied board) would never look stale.
    if (clearFutureLock(base.lockfilePath, stale)) return withLock(file, fn, options);
    if (retries === 0) throw error;
    release = await lockfile.lock(file, {
      ...base,
      retries: { retries, factor: 1.5, minTimeout: 2, maxTimeout: 120, randomize: true },
    });
  }
  try {
    return await fn();
  } finally {
    try {
      await release();
    } catch {
      // Released by a stale takeover already; the write we made is fenced by the task's token.
    }
  }
}

/**
 * Lock directories live in `.locks/` beside the file, not next to it: every mkdir/rmdir takes the
 * parent directory's inode lock in the kernel, and the task files' own directory is busy enough with
 * the atomic renames.
 */
export function lockPathOf(file: string): string {
  return path.join(path.dirname(file), '.locks', `${path.basename(file)}.lock`);
}

function lockSyncMakingDir(file: string, options: Parameters<typeof lockfile.lockSync>[1] & { lockfilePath: string }): () => void {
  try {
    return lockfile.lockSync(file, options);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    fs.mkdirSync(path.dirname(options.lockfilePath), { recursive: true });
    return lockfile.lockSync(file, options);
  }
}

/** Removes a lock directory whose mtime is further in the future than `stale`; true if it did. */
function clearFutureLock(lockPath: string, stale: number): boolean {
  const stat = fs.statSync(lockPath, { throwIfNoEntry: false });
  if (!stat || stat.mtimeMs <= Date.now() + stale) return false;
  fs.rmSync(lockPath, { recursive: true, force: true });
  return true;
}

export function isLockBusy(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === 'ELOCKED';
}

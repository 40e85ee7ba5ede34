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
 * Retries back off with jitter; a compromised lock is reported, never thrown, because the default
 * handler throws from a timer and kills the whole thread.
 */
export async function withLock<T>(file: string, fn: () => T | Promise<T>, options: LockOptions = {}): Promise<T> {
  const retries = options.retries ?? 60;
  const release = await lockfile.lock(file, {
    realpath: false,
    stale: options.staleMs ?? DEFAULT_LOCK_STALE_MS,
    retries: retries === 0 ? 0 : { retries, factor: 1.5, minTimeout: 2, maxTimeout: 120, randomize: true },
    onCompromised: options.onCompromised ?? (() => {}),
  });
  try {
    return await fn();
  } finally {
    await release().catch(() => {
      // Released by a stale takeover already; the write we made is fenced by the task's token.
    });
  }
}

export function isLockBusy(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === 'ELOCKED';
}

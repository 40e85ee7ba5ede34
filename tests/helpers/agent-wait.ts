/** Waiting without sleeping: conditions with deadlines, and logs of events that can be awaited. */
import fs from 'node:fs';
import path from 'node:path';
import { tempDir } from './temp-dirs.js';

/**
 * The ceiling of a wait for an event or a state: only a hang reaches it. A quiet 2-core machine
 * takes seconds for the slowest wait here (a whole pipeline); one four times slower, or shared with
 * two other copies of the suite, still finishes far inside it.
 */
export const HANG_MS = 120_000;

/**
 * Re-checks `check` every `intervalMs` until it returns something truthy, and returns that; throws
 * with `what` once `timeoutMs` has passed. A check that throws is retried (a file mid-creation).
 */
export async function until<T>(
  check: () => T | null | undefined | false | '' | 0,
  what: string,
  { timeoutMs = HANG_MS, intervalMs = 15 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = check();
      if (value) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      const detail = lastError ? ` (last error: ${(lastError as Error).message})` : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${detail}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** Events kept in order; `waitFor` sees ones that arrived before it was called. */
export class EventLog<E> {
  readonly events: E[] = [];
  private readonly waiters = new Set<() => void>();

  push = (event: E): void => {
    this.events.push(event);
    for (const wake of [...this.waiters]) wake();
  };

  /** The first event (from index `from`) matching `match`; rejects after `timeoutMs`. */
  waitFor<T extends E = E>(
    match: (event: E) => event is T,
    what: string,
    options?: { timeoutMs?: number; from?: number },
  ): Promise<T>;
  waitFor(match: (event: E) => boolean, what: string, options?: { timeoutMs?: number; from?: number }): Promise<E>;
  waitFor(match: (event: E) => boolean, what: string, { timeoutMs = HANG_MS, from = 0 } = {}): Promise<E> {
    return new Promise((resolve, reject) => {
      const check = (): boolean => {
        const found = this.events.slice(from).find(match);
        if (found === undefined) return false;
        finish();
        resolve(found);
        return true;
      };
      const timer = setTimeout(() => {
        finish();
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}; events so far:\n${this.describe()}`));
      }, timeoutMs);
      const finish = () => {
        clearTimeout(timer);
        this.waiters.delete(onEvent);
      };
      const onEvent = () => void check();
      if (!check()) this.waiters.add(onEvent);
    });
  }

  describe(last = 30): string {
    return this.events
      .slice(-last)
      .map((event) => JSON.stringify(event))
      .join('\n');
  }
}

export function tempBoard(prefix = 'autoteam-agent-'): string {
  return tempDir(prefix);
}

export function removeBoard(root: string): void {
  if (root) fs.rmSync(root, { recursive: true, force: true });
}

/**
 * How long a task waits before its next attempt after `attempts` failed ones: exponential from
 * `baseMs`, capped at `maxMs`, with ±25% jitter so tasks that failed together do not retry together.
 */
export function backoffMs(attempts: number, baseMs: number, maxMs: number, random: () => number = Math.random): number {
  const delay = Math.min(maxMs, baseMs * 2 ** (attempts - 1));
  return Math.max(baseMs, Math.min(maxMs, Math.round(delay * (0.75 + random() * 0.5))));
}

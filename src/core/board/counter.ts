import fs from 'node:fs';

/**
 * Takes the next number from a counter file. Call it under the counter's lock. The counter is
 * trusted unless `isTaken` says its number is already used (something made by hand, or a lost
 * counter file); then `floor()` — one past the highest number in use — decides.
 */
export function takeNext(counterFile: string, isTaken: (n: number) => boolean, floor: () => number): number {
  let next = 0;
  try {
    next = Number.parseInt(fs.readFileSync(counterFile, 'utf8'), 10) || 0;
  } catch {
    // No counter yet.
  }
  // Past the numbers a task can have (a hand edit): read as lost, so the numbers in use decide.
  if (!Number.isSafeInteger(next + 1)) next = 0;
  if (next <= 0 || isTaken(next)) next = Math.max(next, floor(), 1);
  fs.writeFileSync(counterFile, `${next + 1}\n`);
  return next;
}

/** DbClock: which readings of the database's clock it goes by. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DbClock } from '../../src/core/board/pg/db-clock.js';

afterEach(() => {
  vi.useRealTimers();
});

/** A reading sent at `sentMs` that came back `roundTripMs` later, the database's clock `aheadMs` ahead then (at the midpoint). */
function reading(clock: DbClock, sentMs: number, roundTripMs: number, aheadMs: number): void {
  vi.setSystemTime(sentMs + roundTripMs);
  clock.read(new Date(sentMs + roundTripMs / 2 + aheadMs), sentMs);
}

describe('DbClock', () => {
  it('goes by the midpoint of a short round trip', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const clock = new DbClock();
    reading(clock, 1_000_000, 4, 250);
    expect(clock.now().getTime() - Date.now()).toBe(250);
  });

  it('sets aside a reading that waited (a pooled connection, a lock) while a short one is under a minute old', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const clock = new DbClock();
    reading(clock, 1_000_000, 4, 0);
    // Sent, then 600 ms waiting for a connection: the database's clock was read near the end.
    reading(clock, 1_010_000, 600, 290);
    expect(clock.now().getTime() - Date.now()).toBe(0);
    // As good as the one in use, or near it: taken.
    reading(clock, 1_020_000, 6, 40);
    expect(clock.now().getTime() - Date.now()).toBe(40);
    // A minute on, the best there is.
    reading(clock, 1_090_000, 600, -120);
    expect(clock.now().getTime() - Date.now()).toBe(-120);
  });
});

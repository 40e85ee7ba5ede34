import { describe, expect, it } from 'vitest';
import { BoardOutage } from '../../src/core/board/outage.js';

describe('BoardOutage', () => {
  it('shows the first unreachable error of each source, counts the rest, and ends with one notice', () => {
    let now = 1_000_000;
    const outage = new BoardOutage(() => now);
    expect(outage.recovered()).toBeNull();
    expect(outage.report('engineer')).toBe(true);
    expect(outage.report('watcher')).toBe(true);
    now += 2_000;
    expect(outage.report('engineer')).toBe(false);
    expect(outage.report('watcher')).toBe(false);
    now += 3_000;
    expect(outage.report('engineer')).toBe(false);
    expect(outage.lastSeen).toBe(now);
    now += 20_000;
    expect(outage.recovered()).toBe('the board answers again (unreachable for about 25 s; 3 repeated errors not shown)');
    expect(outage.since).toBeNull();
    // The next outage starts afresh: its first errors are shown again.
    expect(outage.report('engineer')).toBe(true);
  });
});

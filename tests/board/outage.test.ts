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
    // Silence is counted from when the board answered again: heartbeats could not be written before.
    expect(outage.lastSeen).toBe(now);
    // The next outage starts afresh: its first errors are shown again.
    expect(outage.report('engineer')).toBe(true);
  });

  it('hides only repeats of unreachable errors, and probes the board only during an outage', async () => {
    const outage = new BoardOutage(() => 0);
    let checks = 0;
    const check = async () => void checks++;
    expect(await outage.probe(check)).toBeNull();
    expect(checks).toBe(0);
    expect(outage.hides('engineer', 'MODEL_AUTH')).toBe(false);
    expect(outage.hides('engineer', 'BOARD_UNREACHABLE')).toBe(false);
    expect(outage.hides('engineer', 'BOARD_UNREACHABLE')).toBe(true);
    expect(await outage.probe(() => Promise.reject(new Error('still down')))).toBeNull();
    expect(outage.since).not.toBeNull();
    expect(await outage.probe(check)).toMatch(/^the board answers again \(unreachable for about 1 s; 1 repeated error not shown\)$/);
    expect(checks).toBe(1);
    expect(outage.since).toBeNull();
  });

  it("tells the outage's start with the first error's own words, not the words of its line again", () => {
    const changes: string[] = [];
    const outage = new BoardOutage(() => 0, (state, source, message) => changes.push(`${state} ${source}: ${message}`));
    expect(outage.hides('engineer', 'BOARD_UNREACHABLE', 'cannot use the board at postgres://h/db: connect ECONNREFUSED 127.0.0.1:5432')).toBe(false);
    expect(outage.hides('reviewer', 'BOARD_UNREACHABLE', 'cannot use the board at postgres://h/db: Connection terminated')).toBe(false);
    expect(changes).toEqual(['down engineer: cannot use the board at postgres://h/db: connect ECONNREFUSED 127.0.0.1:5432']);
  });
});

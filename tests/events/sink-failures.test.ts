/**
 * A log that cannot be written: the sink tells each failure listener once a streak — one that comes in
 * the middle of a streak at once — and a listener that throws neither stops the others nor the writes
 * that come after (a rejected chain would have failed every later flush, and every answer with it).
 */
import { describe, expect, it } from 'vitest';
import { EventSink } from '../../src/core/events/emitter.js';
import type { EventLog } from '../../src/core/events/log.js';
import type { TeamEvent } from '../../src/core/events/schema.js';

/** A log whose appends fail while `broken` is set. */
function flakyLog() {
  const written: TeamEvent[] = [];
  const log = {
    broken: true,
    async append(events: readonly TeamEvent[]) {
      if (log.broken) throw new Error('EISDIR: a folder where the log was');
      written.push(...events);
      return [...events];
    },
    read: async () => written,
    subscribe: async () => undefined,
  };
  return { log: log as EventLog & { broken: boolean }, written };
}

describe('EventSink failures', () => {
  it('tells each listener once a streak, a late one at once, and goes on writing past a listener that throws', async () => {
    const { log, written } = flakyLog();
    const told: string[] = [];
    const sink = new EventSink(log, () => 'team', () => {
      throw new Error('the first listener fails');
    }, undefined, 0);
    sink.onFailure((error) => told.push(`early: ${(error as Error).message}`));
    sink.emit({ type: 'note', text: 'one' });
    await expect(sink.flush()).resolves.toBeUndefined();
    sink.emit({ type: 'note', text: 'two' });
    await sink.flush();
    expect(told).toEqual(['early: EISDIR: a folder where the log was']);
    // Listening in the middle of the streak: told at once.
    sink.onFailure((error) => told.push(`late: ${(error as Error).message}`));
    expect(told).toEqual(['early: EISDIR: a folder where the log was', 'late: EISDIR: a folder where the log was']);
    // Mended: written again; a new streak is told anew.
    log.broken = false;
    sink.emit({ type: 'note', text: 'three' });
    await sink.flush();
    expect(written.map((event) => (event as { text: string }).text)).toEqual(['three']);
    log.broken = true;
    sink.emit({ type: 'note', text: 'four' });
    await sink.flush();
    expect(told).toHaveLength(4);
  });
});

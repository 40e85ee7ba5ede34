/**
 * The EventSink's appends: a burst of events (a model call and its tool calls, a completion and the
 * task it posts) goes to the log in one append, in order, and flush() writes what is queued at once.
 */
import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { EventSink } from '../../src/core/events/emitter.js';
import { FileEventLog } from '../../src/core/events/file-log.js';
import type { TeamEvent } from '../../src/core/events/schema.js';
import { tempRoot } from '../helpers/board-spawn.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

/** A file log whose appends are counted. */
function countedLog(): { log: FileEventLog; appends: TeamEvent[][] } {
  const dir = tempRoot('autoteam-sink-');
  dirs.push(dir);
  const log = new FileEventLog(dir);
  const appends: TeamEvent[][] = [];
  const append = log.append.bind(log);
  log.append = (events) => (appends.push([...events]), append(events));
  return { log, appends };
}

const idle = (sink: EventSink, reason: string) => sink.emit({ type: 'teammate_idle', agent: 'eng', role: 'engineer', reason });

describe('EventSink', () => {
  it('appends a burst spread over a few turns of the event loop in one append, in order', async () => {
    const { log, appends } = countedLog();
    // A window no stall of a busy machine outlasts: the turns below are what is tested, not the clock.
    const sink = new EventSink(log, () => 'crew', undefined, undefined, 60_000);
    idle(sink, 'one');
    await new Promise((resolve) => setImmediate(resolve));
    idle(sink, 'two');
    await Promise.resolve();
    idle(sink, 'three');
    await sink.flush();
    expect(appends.map((batch) => batch.map((event) => (event as { reason?: string }).reason))).toEqual([['one', 'two', 'three']]);
    expect((await log.read()).map((event) => [event.seq, (event as { reason?: string }).reason])).toEqual([
      [1, 'one'],
      [2, 'two'],
      [3, 'three'],
    ]);
  });

  it('writes on its own, without a flush', async () => {
    const { log, appends } = countedLog();
    const sink = new EventSink(log, () => 'crew');
    idle(sink, 'alone');
    for (const end = Date.now() + 10_000; appends.length === 0 && Date.now() < end; ) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(appends).toHaveLength(1);
    await sink.flush();
    expect((await log.read()).map((event) => (event as { reason?: string }).reason)).toEqual(['alone']);
  });
});

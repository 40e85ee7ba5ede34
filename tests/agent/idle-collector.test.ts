import v8 from 'node:v8';
import vm from 'node:vm';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { COMPACT_SLACK, IdleCollector, isolateCollector, oldSpace } from '../../src/worker/idle-collector.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('IdleCollector', () => {
  it('lets go of what the thread holds while it works even where V8 gives no collector', () => {
    vi.useFakeTimers();
    const release = vi.fn();
    const collector = new IdleCollector(null, 1_000, release);
    collector.status('working');
    collector.status('idle');
    vi.advanceTimersByTime(1_000);
    expect(release).toHaveBeenCalledTimes(1);
    expect(collector.collections).toBe(0);
  });

  it('collects once when a teammate settles into idle after work, not while it stays idle or goes back to work', () => {
    vi.useFakeTimers();
    const collect = vi.fn();
    const release = vi.fn();
    const collector = new IdleCollector(collect, 1_000, release);
    // Idle from the start: nothing to give back.
    collector.status('idle');
    vi.advanceTimersByTime(5_000);
    expect(collect).not.toHaveBeenCalled();
    // Work, idle for a moment, work again: still nothing.
    collector.status('working');
    collector.status('idle');
    vi.advanceTimersByTime(500);
    collector.status('working');
    vi.advanceTimersByTime(5_000);
    expect(collect).not.toHaveBeenCalled();
    // Idle for good: one collection, and idle wakes after it cost none.
    collector.status('idle');
    vi.advanceTimersByTime(1_000);
    expect(collect).toHaveBeenCalledTimes(1);
    // What the thread holds while it works (its launcher) is let go with it.
    expect(release).toHaveBeenCalledTimes(1);
    collector.status('idle');
    vi.advanceTimersByTime(5_000);
    expect(collect).toHaveBeenCalledTimes(1);
    // Waiting for an answer counts as work; closing drops a collection not yet made.
    collector.status('waiting');
    collector.status('idle');
    collector.close();
    vi.advanceTimersByTime(5_000);
    expect(collect).toHaveBeenCalledTimes(1);
    expect(collector.collections).toBe(1);
    expect(release).toHaveBeenCalledTimes(1);
  });

  it('in a thread of several teammates, collects once every teammate it still runs is idle', () => {
    vi.useFakeTimers();
    const collect = vi.fn();
    const collector = new IdleCollector(collect, 1_000, () => undefined);
    collector.status('working', 'eng-1');
    collector.status('working', 'eng-2');
    collector.status('idle', 'eng-1');
    vi.advanceTimersByTime(5_000);
    // eng-2 still works: the thread is not idle.
    expect(collect).not.toHaveBeenCalled();
    collector.status('idle', 'eng-2');
    vi.advanceTimersByTime(999);
    expect(collect).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(collect).toHaveBeenCalledTimes(1);
    // One back at work while the other leaves: nothing until that one is idle too.
    collector.status('working', 'eng-1');
    collector.leave('eng-2');
    vi.advanceTimersByTime(5_000);
    expect(collect).toHaveBeenCalledTimes(1);
    collector.status('idle', 'eng-1');
    vi.advanceTimersByTime(1_000);
    expect(collect).toHaveBeenCalledTimes(2);
  });

  it('in a thread of several teammates, collects when the last one still at work leaves', () => {
    vi.useFakeTimers();
    const collect = vi.fn();
    const collector = new IdleCollector(collect, 1_000, () => undefined);
    collector.status('working', 'eng-1');
    collector.status('idle', 'eng-2');
    collector.status('shutdown', 'eng-1');
    vi.advanceTimersByTime(5_000);
    expect(collect).not.toHaveBeenCalled();
    collector.leave('eng-1');
    vi.advanceTimersByTime(1_000);
    expect(collect).toHaveBeenCalledTimes(1);
    // The last one leaving leaves nothing to collect for.
    collector.leave('eng-2');
    collector.status('idle', 'eng-3');
    vi.advanceTimersByTime(5_000);
    expect(collect).toHaveBeenCalledTimes(1);
  });

  it("gives this thread's heap back with V8's own collector, and leaves no gc global behind", () => {
    const gc = isolateCollector();
    expect(gc).toBeTypeOf('function');
    // The flag was set only while the collector's context was made: a context made now has no gc.
    expect(vm.runInNewContext('typeof gc')).toBe('undefined');
    let garbage: unknown[] | null = Array.from({ length: 300_000 }, (_, i) => ({ i, text: `item ${i}` }));
    const held = v8.getHeapStatistics().used_heap_size;
    expect(garbage.length).toBe(300_000);
    garbage = null;
    gc!();
    // 300,000 objects with their strings are well over 10 MB.
    expect(held - v8.getHeapStatistics().used_heap_size).toBeGreaterThan(10 * 1024 * 1024);
  });

  it('compacts when what survives is spread thin over the old generation, and gives those pages back', () => {
    const gc = isolateCollector()!;
    let all: Array<{ i: number; text: string }> | null = Array.from({ length: 400_000 }, (_, i) => ({ i, text: `item ${i}` }));
    gc(); // all of it survives into the old generation
    // One object in sixteen lives on: a survivor on every page, so no page is free without compacting.
    const kept = all.filter((_, i) => i % 16 === 0);
    all = null;
    const before = oldSpace();
    gc();
    const after = oldSpace();
    expect(kept.length).toBe(25_000);
    expect(before.size - after.size).toBeGreaterThan(10 * 1024 * 1024);
    const slack = after.size - after.used;
    expect(slack <= COMPACT_SLACK.bytes || slack <= after.size * COMPACT_SLACK.share).toBe(true);
  });
});

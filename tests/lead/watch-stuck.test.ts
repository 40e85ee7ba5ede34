/**
 * `run` stops, leaving its pipelines open, once nothing can move them for a while (the last worker
 * of a role left): not before, not while a question waits for the person, and not for a moment's gap.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { watchStuck } from '../../src/cli/run-start.js';

afterEach(() => {
  vi.useRealTimers();
});

function fakeSession() {
  const state = { busy: null as string | null, questions: 0 };
  const session = {
    busyReason: () => state.busy,
    pendingQuestions: () => Array.from({ length: state.questions }, () => ({ questionId: 'q', from: 'analyst', question: '?', task: 1, pipeline: 1, at: '' })),
    fatalModelError: () => null,
    snapshot: () => ({ tasks: [{ id: 3, pipeline: 1, status: 'pending', role: 'engineer' }] }) as never,
  };
  return { state, session };
}

describe('watchStuck', () => {
  it('stops once the pipelines stay unmovable for the grace, naming who would go on; a gap shorter than it, or a question waiting, does not', () => {
    vi.useFakeTimers();
    const { state, session } = fakeSession();
    const stops: string[] = [];
    const end = watchStuck(session, () => [1], (reason) => stops.push(reason), 5_000);
    // A worker restarted within the grace: the count starts over.
    vi.advanceTimersByTime(3_000);
    state.busy = 'task #3 in progress';
    vi.advanceTimersByTime(1_000);
    state.busy = null;
    vi.advanceTimersByTime(4_000);
    expect(stops).toEqual([]);
    // The person has a question to answer: that is not stuck.
    state.questions = 1;
    vi.advanceTimersByTime(10_000);
    expect(stops).toEqual([]);
    state.questions = 0;
    vi.advanceTimersByTime(6_000);
    expect(stops).toEqual(['nobody is left to work pipeline #1 (task #3 waits for a teammate of role engineer) for 5 s: autoteam worker --role engineer on this board goes on with it']);
    vi.advanceTimersByTime(10_000);
    expect(stops).toHaveLength(1);
    end();
  });

  it('says nothing while the run has no active pipeline', () => {
    vi.useFakeTimers();
    const { session } = fakeSession();
    const stops: string[] = [];
    const end = watchStuck(session, () => [], (reason) => stops.push(reason), 1_000);
    vi.advanceTimersByTime(5_000);
    expect(stops).toEqual([]);
    end();
  });
});

/**
 * Which teammates a board change wakes (BoardWakes, used by the TeammateManager): the idle ones at
 * once; one at work when it reports idle again, and only if a change came while it worked.
 */
import { describe, expect, it } from 'vitest';
import { BoardWakes, workFor } from '../../src/core/agent/wake.js';

describe('BoardWakes', () => {
  it('wakes a teammate that never reported a status, and every idle one', () => {
    const wakes = new BoardWakes();
    expect(wakes.status('analyst', 'idle')).toBe(false);
    expect(wakes.changed(['analyst', 'engineer'])).toEqual(['analyst', 'engineer']);
  });

  it('passes over a teammate at work or waiting on an answer, and wakes it when it is idle again', () => {
    const wakes = new BoardWakes();
    wakes.status('engineer', 'working');
    wakes.status('analyst', 'waiting');
    expect(wakes.changed(['analyst', 'engineer', 'reviewer'])).toEqual(['reviewer']);
    expect(wakes.changed(['analyst', 'engineer', 'reviewer'])).toEqual(['reviewer']);
    // Back to idle after a change it was not told of: woken once, then like any idle teammate.
    expect(wakes.status('engineer', 'idle')).toBe(true);
    expect(wakes.status('engineer', 'idle')).toBe(false);
    expect(wakes.changed(['engineer'])).toEqual(['engineer']);
    // From waiting to working is still at work: the missed change is kept for its idle.
    expect(wakes.status('analyst', 'working')).toBe(false);
    expect(wakes.status('analyst', 'idle')).toBe(true);
  });

  it('does not wake a teammate back from work when nothing changed meanwhile', () => {
    const wakes = new BoardWakes();
    wakes.status('engineer', 'working');
    expect(wakes.status('engineer', 'idle')).toBe(false);
  });

  it('a teammate that left is forgotten: one started later under the name is woken at once', () => {
    const wakes = new BoardWakes();
    wakes.status('engineer', 'working');
    wakes.forget('engineer');
    expect(wakes.changed(['engineer'])).toEqual(['engineer']);
  });

  it('a board change has work for a role when a claimable task is of that role or of none', () => {
    const engineering = workFor([{ role: 'engineer' }, { role: 'engineer' }, { role: 'reviewer' }]);
    expect(['analyst', 'engineer', 'reviewer'].filter(engineering)).toEqual(['engineer', 'reviewer']);
    expect(['analyst', 'engineer'].filter(workFor([{ role: null }]))).toEqual(['analyst', 'engineer']);
    expect(['analyst', 'engineer'].filter(workFor([]))).toEqual([]);
  });
});

/**
 * Which teammates a board change wakes (BoardWakes, used by the TeammateManager): idle ones the board
 * has a claimable task for, one per task, the one heard from last first; one waiting on an answer on
 * every change (it may be its task's cancel); one at work when it reports idle again, and only if a
 * change came while it worked.
 */
import { describe, expect, it } from 'vitest';
import { BoardWakes, wakesFor } from '../../src/core/agent/wake.js';

const team = (...names: string[]) => names.map((name) => ({ name, role: name.replace(/\d+$/, '') }));
/** A board of claimable tasks of these roles (null: any role). */
const open = (...roles: Array<string | null>) => () => roles.map((role) => ({ role }));
const anything = open(null, null, null, null);

describe('wakesFor', () => {
  it('wakes a teammate of role `any` for a task of any role, after the ones of the task\'s own role', () => {
    const idle = [{ name: 'generalist', role: 'any' }, ...team('engineer', 'reviewer')];
    expect(wakesFor([{ role: 'engineer' }], idle)).toEqual(['engineer']);
    expect(wakesFor([{ role: 'engineer' }, { role: 'engineer' }], idle)).toEqual(['engineer', 'generalist']);
    expect(wakesFor([{ role: 'analyst' }], idle)).toEqual(['generalist']);
    expect(wakesFor([], idle)).toEqual([]);
  });
});

describe('BoardWakes', () => {
  it('wakes a teammate that never reported a status, and every idle one', () => {
    const wakes = new BoardWakes();
    expect(wakes.status('analyst', 'idle')).toBe(false);
    expect(wakes.changed(team('analyst', 'engineer'), anything)).toEqual(['analyst', 'engineer']);
  });

  it('passes over a teammate at work, and wakes it when it is idle again', () => {
    const wakes = new BoardWakes();
    wakes.status('engineer', 'working');
    expect(wakes.changed(team('engineer', 'reviewer'), anything)).toEqual(['reviewer']);
    expect(wakes.changed(team('engineer', 'reviewer'), anything)).toEqual(['reviewer']);
    // Back to idle after a change it was not told of: woken once, then like any idle teammate.
    expect(wakes.status('engineer', 'idle')).toBe(true);
    expect(wakes.status('engineer', 'idle')).toBe(false);
    expect(wakes.changed(team('engineer'), anything)).toEqual(['engineer']);
  });

  it('wakes a teammate waiting on an answer on every change, whatever the board holds for its role', () => {
    const wakes = new BoardWakes();
    wakes.status('analyst', 'working');
    wakes.status('analyst', 'waiting');
    expect(wakes.changed(team('analyst', 'reviewer'), anything)).toEqual(['reviewer', 'analyst']);
    expect(wakes.changed(team('analyst'), open())).toEqual(['analyst']);
    // Back at work (answered): passed over again, and the missed changes are kept for its idle.
    expect(wakes.status('analyst', 'working')).toBe(false);
    expect(wakes.changed(team('analyst'), anything)).toEqual([]);
    expect(wakes.status('analyst', 'idle')).toBe(true);
  });

  it('wakes a teammate when it starts waiting if a change came while it still worked (its task may be cancelled)', () => {
    const wakes = new BoardWakes();
    wakes.status('analyst', 'working');
    // The cancel's change is seen before the status that says the teammate now waits.
    expect(wakes.changed(team('analyst'), anything)).toEqual([]);
    expect(wakes.status('analyst', 'waiting')).toBe(true);
    // Nothing changed while it worked: no wake.
    wakes.status('engineer', 'working');
    expect(wakes.status('engineer', 'waiting')).toBe(false);
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
    expect(wakes.changed(team('engineer'), anything)).toEqual(['engineer']);
  });

  it('wakes one idle teammate per claimable task of its role, then per task of no role', () => {
    const idle = team('analyst1', 'engineer1', 'engineer2', 'engineer3', 'reviewer1');
    expect(wakesFor([{ role: 'engineer' }], idle)).toEqual(['engineer1']);
    expect(wakesFor([{ role: 'engineer' }, { role: 'engineer' }, { role: 'reviewer' }], idle)).toEqual(['engineer1', 'engineer2', 'reviewer1']);
    // A task of no role is for anyone: one teammate, whatever its role.
    expect(wakesFor([{ role: null }], idle)).toEqual(['analyst1']);
    expect(wakesFor([{ role: 'engineer' }, { role: null }], idle)).toEqual(['analyst1', 'engineer1']);
    expect(wakesFor([], idle)).toEqual([]);
    // More tasks than teammates: every one of the role, nobody of another.
    expect(wakesFor([{ role: 'reviewer' }, { role: 'reviewer' }], idle)).toEqual(['reviewer1']);
  });

  it('the teammate heard from last goes first, but one woken and not heard from since goes last', () => {
    const wakes = new BoardWakes();
    const engineers = team('engineer1', 'engineer2', 'engineer3');
    for (const name of ['engineer3', 'engineer1', 'engineer2']) wakes.status(name, 'idle');
    // engineer2 reported last (it worked last): it takes the task.
    expect(wakes.changed(engineers, open('engineer'))).toEqual(['engineer2']);
    // engineer2 has claimed it and not said so yet: a second task wakes the next, not engineer2 again.
    expect(wakes.changed(engineers, open('engineer'))).toEqual(['engineer1']);
    // Two open (a claim lost): the one not woken yet, then the woken one heard from last.
    expect(wakes.changed(engineers, open('engineer', 'engineer'))).toEqual(['engineer3', 'engineer2']);
    // engineer2 reports back (at work, then idle): heard from last, it is first again.
    wakes.status('engineer2', 'working');
    wakes.status('engineer2', 'idle');
    expect(wakes.changed(engineers, open('engineer'))).toEqual(['engineer2']);
    expect(wakes.changed(engineers, open())).toEqual([]);
  });

  it('one that looked and claimed nothing is woken again when a task came meanwhile whose wake went to another', () => {
    const wakes = new BoardWakes();
    const engineers = team('engineer1', 'engineer2');
    wakes.status('engineer1', 'idle');
    wakes.status('engineer2', 'idle');
    // engineer2 is woken for a task, engineer1 for a second; a third teammate claims the first.
    expect(wakes.changed(engineers, open('engineer'))).toEqual(['engineer2']);
    expect(wakes.changed(engineers, open('engineer'))).toEqual(['engineer1']);
    // A third task, while both are still taken for claiming: its wake goes to one of them.
    expect(wakes.changed(engineers, open('engineer'))).toEqual(['engineer2']);
    // engineer1 found nothing (its task was taken): the third task is on the board, so it looks again.
    expect(wakes.looked('engineer1', 'engineer', open('engineer'))).toBe(true);
    // Nothing changed since it looked: not again, whatever the board seems to hold.
    expect(wakes.looked('engineer1', 'engineer', open('engineer'))).toBe(false);
    // A change with no task of its role: not woken.
    wakes.changed([], open('reviewer'));
    expect(wakes.looked('engineer1', 'engineer', open('reviewer'))).toBe(false);
    // Answered when it looked: it goes before the one woken and still silent.
    expect(wakes.changed(engineers, open('engineer'))).toEqual(['engineer1']);
  });

  it('a teammate that looked (an idle poll) does not go before the one that worked last', () => {
    const wakes = new BoardWakes();
    const engineers = team('engineer1', 'engineer2');
    wakes.status('engineer1', 'idle');
    wakes.status('engineer2', 'working');
    wakes.status('engineer2', 'idle');
    wakes.looked('engineer1', 'engineer', open());
    expect(wakes.changed(engineers, open('engineer'))).toEqual(['engineer2']);
  });

  it('a board it cannot read wakes every idle teammate to read for itself', () => {
    const wakes = new BoardWakes();
    wakes.status('engineer1', 'working');
    const unreadable = () => {
      throw new Error('EIO');
    };
    expect(wakes.changed(team('analyst1', 'engineer1', 'engineer2'), unreadable)).toEqual(['analyst1', 'engineer2']);
  });
});

/**
 * LogView.catchUp waits for the ends the board shows when it is called, until the log says them too
 * (a thread writes a task before its events reach the log); never for tasks that end meanwhile, which
 * on a team at work would hold the caller's line until the team paused. On the real file board and
 * its log; a task ended through a board that tells no event stands for one whose events are on their way.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { fileBoard } from '../../src/core/board/board.js';
import type { TeamEvent } from '../../src/core/events/schema.js';
import { LogView } from '../../src/core/lead/log-view.js';
import { tempBoard } from '../helpers/repl-session.js';

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) fs.rmSync(root, { recursive: true, force: true });
});

/** Ends `id` on the board with no event for it: as a thread's write whose events are still on their way. */
async function endQuietly(root: string, id: number): Promise<void> {
  const quiet = fileBoard(root);
  quiet.tasks.emitTo(null);
  expect((await quiet.tasks.update(id, { status: 'completed', result: 'done' })).ok).toBe(true);
}

describe('LogView.catchUp', () => {
  it('waits for an end the board showed at the call, not for one that came after', async () => {
    const root = tempBoard('autoteam-log-view-');
    roots.push(root);
    const board = fileBoard(root);
    const shown: TeamEvent[] = [];
    const view = new LogView(board.log, board.tasks, (event) => shown.push(event), (error) => { throw error; });
    await view.start();
    const early = await board.tasks.create({ subject: 'early' });
    const late = await board.tasks.create({ subject: 'late' });
    await board.sink.flush();
    await view.catchUp();
    expect(shown.map((event) => [event.type, event.task])).toEqual([['task_posted', early.id], ['task_posted', late.id]]);

    await endQuietly(root, early.id);
    await board.tasks.refresh();
    const caughtUp = view.catchUp().then(() => 'caught up');
    // While it waits for the early end to reach the log: another task ends, and the early end comes.
    await endQuietly(root, late.id);
    await board.tasks.refresh();
    board.sink.emit({ type: 'task_completed', task: early.id, agent: 'person', result: 'done', token: 0 });
    await board.sink.flush();
    // Before: it waited for the late end too, which never comes, until its 5 s were up.
    const waited = new Promise((resolve) => setTimeout(() => resolve('waited for the late end'), 4_000));
    expect(await Promise.race([caughtUp, waited])).toBe('caught up');
    expect(shown.map((event) => event.type)).toContain('task_completed');
    view.stop();
  });

  it('does not wait for an end that came before the view began, when a later event is about it (the merge queue on an old approval)', async () => {
    const root = tempBoard('autoteam-log-view-');
    roots.push(root);
    const board = fileBoard(root);
    const old = await board.tasks.create({ subject: 'approved long ago', pipeline: 1 });
    await endQuietly(root, old.id);
    await board.tasks.refresh();
    const shown: TeamEvent[] = [];
    const view = new LogView(board.log, board.tasks, (event) => shown.push(event), (error) => { throw error; });
    await view.start();
    board.sink.emit({ type: 'merge_step', pipeline: 1, task: old.id, agent: 'lead', step: 'queued', branch: 'autoteam/1-x', into: 'main', detail: 'approved 1 min ago; 1 of 1 in the queue' });
    await board.sink.flush();
    const caughtUp = view.catchUp().then(() => 'caught up');
    // Before: its end, never to come again, was waited for until the 5 s were up (a Ctrl+C of `run` held that long).
    const waited = new Promise((resolve) => setTimeout(() => resolve('waited for an old end'), 4_000));
    expect(await Promise.race([caughtUp, waited])).toBe('caught up');
    expect(shown.map((event) => event.type)).toEqual(['merge_step']);
    view.stop();
  });
});

/**
 * A task's end that the board could not take because its database was down (a real PostgreSQL
 * server, stopped and started again) is owed, not dropped: `TaskEnds.settle` after the outage hands
 * the task back (or fails it) at once, instead of leaving it in progress under a dead claim until
 * its lease runs out.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TaskEnds } from '../../src/core/agent/task-ends.js';
import { type PostgresServer, startPostgres } from '../../src/bench/postgres-server.js';
import { type Board, openBoard } from '../../src/core/board/board.js';
import { Pipeline } from '../../src/core/stages/pipeline.js';
import { postgresBin } from '../helpers/postgres.js';
import { until } from '../helpers/agent-wait.js';

const LEASE_MS = 60_000;

describe.skipIf(!postgresBin)('TaskEnds across a database outage', () => {
  let server: PostgresServer;
  let board: Board;
  let dir = '';

  beforeAll(async () => {
    server = await startPostgres(postgresBin!);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-ends-'));
    board = await openBoard(server.url, dir, { leaseMs: LEASE_MS });
  }, 120_000);
  afterAll(async () => {
    await board?.close();
    server?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** A claimed general task (claimed through `by`, whose lease length it gets), and the TaskEnds of the teammate that holds it. */
  async function claimed(subject: string, by: Board = board) {
    const task = await board.tasks.create({ subject, role: 'engineer', by: 'lead' });
    const claim = await by.tasks.claim(task.id, 'eng', { role: 'engineer' });
    if (!claim.ok) throw new Error(claim.reason);
    const lines: string[] = [];
    const ends = new TaskEnds({
      board: board.tasks,
      pipeline: new Pipeline(board.tasks, board.mailbox, { events: board.sink }),
      settings: { maxAttempts: 3, retryBaseMs: 10, retryMaxMs: 10 },
      now: () => new Date(),
      activity: (_task, text) => lines.push(text),
    });
    return { task: claim.task, fence: { owner: 'eng', token: claim.task.claims }, ends, lines };
  }

  /** The task as the database holds it now. */
  async function stored(id: number) {
    await board.tasks.refresh();
    return board.tasks.get(id);
  }

  /** `work` while the database is down; up again after it, whatever it did. */
  async function whileDown(work: () => Promise<void>): Promise<void> {
    server.pause();
    try {
      await work();
    } finally {
      server.resume();
    }
  }

  it('an unfinished attempt the board could not take hands its task back once the board answers', async () => {
    const { task, fence, ends, lines } = await claimed('Hand me back');
    await whileDown(async () => {
      await ends.unfinished(task, fence, 'the model call failed', 'error');
      expect(ends.waiting).toEqual([task.id]);
      // Still down: it stays owed.
      await ends.settle();
      expect(ends.waiting).toEqual([task.id]);
    });
    expect((await stored(task.id)).status).toBe('in_progress');
    await ends.settle();
    expect(ends.waiting).toEqual([]);
    const back = await stored(task.id);
    expect(back).toMatchObject({ status: 'pending', owner: null, attempts: 1 });
    // Backed off as any unfinished attempt is, from when it stopped: claimable again, not after the lease.
    const claim = await board.tasks.claim(task.id, 'eng2', { role: 'engineer' });
    expect(claim.ok, claim.ok ? '' : claim.reason).toBe(true);
    expect(lines).toEqual([expect.stringMatching(new RegExp(`^attempt 1 of #${task.id} failed; retry in .*: the model call failed$`))]);
  }, 120_000);

  it('a failure the board could not take fails the task once the board answers, said once', async () => {
    const { task, fence, ends, lines } = await claimed('Fail me');
    await whileDown(() => ends.fail(task, fence, 'cannot be done'));
    expect(ends.waiting).toEqual([task.id]);
    await ends.settle();
    expect(ends.waiting).toEqual([]);
    expect(await stored(task.id)).toMatchObject({ status: 'failed', owner: 'eng' });
    expect(lines).toEqual([`failed #${task.id}: cannot be done`]);
  }, 120_000);

  it('an owed end whose claim was taken over meanwhile is refused by its fence, and not owed again', async () => {
    const { task, fence, ends } = await claimed('Taken over');
    await whileDown(() => ends.unfinished(task, fence, 'stopped', 'unfinished'));
    // Another claimer took it (its lease could have run out): the late hand-back must not undo that.
    await board.tasks.release(task.id, fence, 'released by hand');
    const other = await board.tasks.claim(task.id, 'eng3', { role: 'engineer' });
    expect(other.ok).toBe(true);
    await ends.settle();
    expect(ends.waiting).toEqual([]);
    expect(await stored(task.id)).toMatchObject({ status: 'in_progress', owner: 'eng3' });
  }, 120_000);

  it('an owed end whose lease ran out with nobody taking the task over still lands: nothing is dropped for the time alone', async () => {
    const short = await openBoard(server.url, dir, { leaseMs: 300 });
    try {
      const { task, fence, ends } = await claimed('Out of lease', short);
      await whileDown(() => ends.unfinished(task, fence, 'stopped', 'unfinished'));
      // The scenario is the lease running out (300 ms), not a wait for something the code does.
      const leaseEnds = Date.parse(task.lease!.until);
      await until(() => Date.now() > leaseEnds + 100, 'the lease to run out');
      expect((await stored(task.id)).status).toBe('in_progress');
      await ends.settle();
      expect(ends.waiting).toEqual([]);
      expect(await stored(task.id)).toMatchObject({ status: 'pending', owner: null, attempts: 1 });
    } finally {
      await short.close();
    }
  }, 120_000);

  it('a stopped teammate ends its round of owed ends, and keeps the rest for one more try', async () => {
    const { task, fence, ends } = await claimed('Owed at the stop');
    await whileDown(async () => {
      await ends.unfinished(task, fence, 'stopped', 'unfinished');
      const stop = new AbortController();
      stop.abort();
      await ends.settle(stop.signal);
      expect(ends.waiting).toEqual([task.id]);
    });
    await ends.settle();
    expect(await stored(task.id)).toMatchObject({ status: 'pending', owner: null });
  }, 120_000);
});

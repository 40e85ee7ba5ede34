/**
 * One suite, two backends: the file board and the PostgreSQL board must behave the same for the
 * runtime — claims across processes, fencing, lease expiry, blockedBy, roles, backoff, cancel. The
 * PostgreSQL cases run against a real server started by the test setup.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type Board, openBoard } from '../../src/core/board/board.js';
import { type OpenedTaskStore, openTaskStore } from '../../src/core/board/open.js';
import { isPostgresUrl } from '../../src/core/board/pg/connection.js';
import type { ClaimReport } from '../helpers/board-jobs.js';
import { HANG_MS } from '../helpers/agent-wait.js';
import { holdLock } from '../helpers/held-lock.js';
import { Actor, startTogether, tempRoot } from '../helpers/board-spawn.js';
import { freshDatabase, postgresBin, usePostgres } from '../helpers/postgres.js';

usePostgres();

const opened: OpenedTaskStore[] = [];
const boards: Board[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close?.();
  for (const board of boards.splice(0)) await board.close();
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

interface Backend {
  name: string;
  location(): Promise<string>;
}

const backends: Backend[] = [
  {
    name: 'file board',
    location: async () => {
      const dir = tempRoot();
      dirs.push(dir);
      return dir;
    },
  },
  ...(postgresBin ? [{ name: 'postgres board', location: freshDatabase }] : []),
];

function tempRootFor(): string {
  const dir = tempRoot('autoteam-local-');
  dirs.push(dir);
  return dir;
}

async function open(location: string, leaseMs?: number): Promise<OpenedTaskStore> {
  const store = await openTaskStore(location, leaseMs ? { leaseMs } : {});
  opened.push(store);
  return store;
}

/** Polls `check` until it holds (no fixed sleeps); fails with `what` after `ms`. */
async function until(check: () => Promise<boolean>, what: string, ms = HANG_MS): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out: ${what}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** Until a session waits for an advisory lock on the database at `url`. */
async function untilWaiting(url: string): Promise<void> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const waiting = async () => (await client.query("SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted")).rows.length > 0;
    await until(waiting, 'a session waiting for the lock');
  } finally {
    await client.end();
  }
}

describe.each(backends)('$name', (backend) => {
  it('creates tasks with increasing ids, reads them back, and records blocks on the blocker', async () => {
    const board = await open(await backend.location());
    const a = await board.create({ subject: 'first', role: 'engineer', artifacts: { requirement: 'x' } });
    const b = await board.create({ subject: 'second', blockedBy: [a.id], by: 'tester' });
    expect(b.id).toBeGreaterThan(a.id);
    expect((await board.get(a.id)).blocks).toEqual([b.id]);
    const read = await board.get(b.id);
    expect(read).toMatchObject({ subject: 'second', status: 'pending', owner: null, blockedBy: [a.id], claims: 0 });
    expect(read.history).toEqual([expect.objectContaining({ by: 'tester', event: 'created', detail: 'second' })]);
    expect((await board.list()).map((t) => t.subject)).toEqual(['first', 'second']);
    await expect(board.create({ subject: 'bad', blockedBy: [999] })).rejects.toThrow(/blockedBy: task #999 does not exist/);
    await expect(Promise.resolve().then(() => board.get(999))).rejects.toThrow(/task #999 does not exist/);
  });

  it('fences every write: a stale token or another owner changes nothing', async () => {
    const board = await open(await backend.location());
    const task = await board.create({ subject: 'fenced' });
    const first = await board.claim(task.id, 'alice');
    expect(first).toMatchObject({ ok: true, task: { owner: 'alice', claims: 1, lease: { owner: 'alice', token: 1 } } });
    expect(await board.claim(task.id, 'bob')).toMatchObject({ ok: false, reason: expect.stringMatching(/already claimed by alice/) });
    expect(await board.claim(task.id + 1000, 'bob')).toEqual({ ok: false, reason: `task #${task.id + 1000} does not exist` });
    expect(await board.complete(task.id, { owner: 'bob', token: 1 }, 'mine')).toMatchObject({ ok: false, fenced: true });
    expect(await board.complete(task.id, { owner: 'alice', token: 7 }, 'stale')).toMatchObject({ ok: false, fenced: true });
    expect(await board.renewLease(task.id, { owner: 'alice', token: 1 })).toMatchObject({ ok: true });
    expect(await board.release(task.id, { owner: 'alice', token: 1 }, 'later')).toMatchObject({ ok: true, task: { status: 'pending', owner: null } });
    const again = await board.claim(task.id, 'bob');
    expect(again).toMatchObject({ ok: true, task: { owner: 'bob', claims: 2 } });
    expect(await board.complete(task.id, { owner: 'alice', token: 1 }, 'late')).toMatchObject({ ok: false, fenced: true });
    const done = await board.complete(task.id, { owner: 'bob', token: 2 }, 'done', { summary: 'ok' });
    expect(done).toMatchObject({ ok: true, task: { status: 'completed', result: 'done', lease: null, artifacts: { summary: 'ok' } } });
    expect((await board.get(task.id)).history.map((h) => h.event)).toEqual(['created', 'claimed', 'released', 'claimed', 'completed']);
  });

  it('a write from a store that has not seen the last change lands on the task as it is, or is refused by it', async () => {
    const location = await backend.location();
    const here = await open(location);
    const there = await open(location);
    const task = await here.create({ subject: 'shared' });
    await there.refresh();
    expect(await there.get(task.id)).toMatchObject({ status: 'pending', owner: null });
    // `there` does not refresh again: what it holds of the task is from before each of these.
    expect(await here.claim(task.id, 'alice')).toMatchObject({ ok: true });
    await here.update(task.id, { artifacts: { summary: 'by alice' } }, { fence: { owner: 'alice', token: 1 }, event: 'noted' });
    const noted = await there.update(task.id, { artifacts: { requirement: 'kept' } }, { by: 'lead', event: 'remarked' });
    expect(noted).toMatchObject({ ok: true, task: { status: 'in_progress', owner: 'alice', artifacts: { summary: 'by alice', requirement: 'kept' } } });
    expect(noted.ok && noted.task.history.map((h) => h.event)).toEqual(['created', 'claimed', 'noted', 'remarked']);
    await here.refresh();
    expect(await here.release(task.id, { owner: 'alice', token: 1 }, 'later')).toMatchObject({ ok: true });
    // Its copy still says alice holds token 1; the task says nobody does.
    expect(await there.complete(task.id, { owner: 'alice', token: 1 }, 'done')).toMatchObject({ ok: false, fenced: true });
    expect(await here.refresh().then(() => here.get(task.id))).toMatchObject({ status: 'pending', owner: null, result: null });
  });

  it("the task that follows another is posted once, by whichever store asks first; the others get it back", async () => {
    const location = await backend.location();
    const here = await open(location);
    const there = await open(location);
    const done = await here.create({ subject: 'stage one', pipeline: 7, stage: 'requirements' });
    const next = (by: string) => ({ subject: 'stage two', pipeline: 7, stage: 'implementation' as const, role: 'engineer', by, artifacts: { from: done.id } });
    const [a, b] = await Promise.all([here.createAfter(next('here'), { pipeline: 7, task: done.id }), there.createAfter(next('there'), { pipeline: 7, task: done.id })]);
    expect([a.created, b.created].sort()).toEqual([false, true]);
    expect(a.task.id).toBe(b.task.id);
    // As stored, and read back alike by a store that did not post it.
    const posted = a.created ? a.task : b.task;
    expect(posted).toMatchObject({ subject: 'stage two', status: 'pending', pipeline: 7, stage: 'implementation', artifacts: { from: done.id } });
    expect(posted.history).toEqual([{ at: posted.createdAt, by: a.created ? 'here' : 'there', event: 'created', detail: 'stage two' }]);
    const reader = await open(location);
    await reader.refresh();
    expect(await reader.get(posted.id)).toEqual(posted);
    expect((await reader.list()).filter((task) => task.artifacts.from === done.id)).toHaveLength(1);
    // Another pipeline's, or another task's, follower is a post of its own.
    expect((await here.createAfter({ ...next('here'), pipeline: 8 }, { pipeline: 8, task: done.id })).created).toBe(true);
  });

  it('a follower posted under the pipeline\'s lock while createAfter waits for it is found, not posted again', async () => {
    const location = await backend.location();
    const holder = await open(location);
    const asker = await open(location);
    const done = await holder.create({ subject: 'stage one', pipeline: 3 });
    const next = { subject: 'stage two', pipeline: 3, artifacts: { from: done.id } };
    let release = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    let holding = () => {};
    const held = new Promise<void>((resolve) => (holding = resolve));
    const posting = holder.withLock('pipeline-3', async () => {
      holding();
      await released;
      return holder.create({ ...next, by: 'holder' });
    });
    await held;
    const asking = asker.createAfter({ ...next, by: 'asker' }, { pipeline: 3, task: done.id });
    // Released once the asker waits for the lock (PostgreSQL shows its wait); on files either order holds.
    if (isPostgresUrl(location)) await untilWaiting(location);
    release();
    const [made, asked] = await Promise.all([posting, asking]);
    expect(asked).toEqual({ task: expect.objectContaining({ id: made.id, history: [expect.objectContaining({ by: 'holder' })] }), created: false });
  });

  it('a board-wide lock held elsewhere: the waiter is told once as its wait begins, and runs after the release; a free lock tells nothing', async () => {
    const location = await backend.location();
    const holder = await open(location);
    const waiter = await open(location);
    const order: string[] = [];
    const { release, done: holderRun } = await holdLock(holder, 'merge-queue');
    let told = () => {};
    const busy = new Promise<void>((resolve) => (told = resolve));
    const waiting = waiter.withLock('merge-queue', async () => void order.push('waiter ran'), {
      onBusy: () => {
        order.push('waiter told');
        told();
      },
    });
    // Told before the holder lets go: the wait is said, not found out afterwards.
    await busy;
    expect(order).toEqual(['waiter told']);
    order.push('released');
    release();
    await Promise.all([holderRun, waiting]);
    expect(order).toEqual(['waiter told', 'released', 'waiter ran']);
    const free: string[] = [];
    await waiter.withLock('merge-queue', async () => void free.push('ran'), { onBusy: () => free.push('told') });
    expect(free).toEqual(['ran']);
  });

  it('a board-wide lock\'s wait ends when its signal aborts: the lock not taken, the work not run, the holder undisturbed', async () => {
    const location = await backend.location();
    const holder = await open(location);
    const waiter = await open(location);
    const { release, done: holderRun } = await holdLock(holder, 'merge-queue');
    const stop = new AbortController();
    let ran = false;
    const waiting = waiter.withLock('merge-queue', async () => void (ran = true), { signal: stop.signal, onBusy: () => stop.abort() });
    await expect(waiting).rejects.toMatchObject({ name: 'AbortError' });
    expect(ran).toBe(false);
    release();
    await holderRun;
    // Free again, and the stopped waiter holds nothing: a lock taken at once.
    let after = false;
    await waiter.withLock('merge-queue', async () => void (after = true), { onBusy: () => undefined, signal: new AbortController().signal });
    expect(after).toBe(true);
  });

  it('an expired lease is taken over with a new token; the old holder is fenced out', async () => {
    const location = await backend.location();
    const board = await open(location, 300);
    const task = await board.create({ subject: 'leased' });
    expect((await board.claim(task.id, 'slow')).ok).toBe(true);
    await until(async () => (await board.scanUnclaimed()).some((t) => t.id === task.id), 'the lease to expire');
    const taken = await board.claimNext('fast');
    expect(taken).toMatchObject({ ok: true, task: { id: task.id, owner: 'fast', claims: 2 } });
    expect(taken?.ok && taken.task.history.at(-1)?.detail).toBe('lease of slow expired; taken over (token 2)');
    expect(await board.complete(task.id, { owner: 'slow', token: 1 }, 'late')).toMatchObject({ ok: false, fenced: true });
    expect(await board.complete(task.id, { owner: 'fast', token: 2 }, 'done')).toMatchObject({ ok: true });
  });

  it('blockedBy, roles and backoff decide what is claimable', async () => {
    const board = await open(await backend.location());
    const first = await board.create({ subject: 'first', role: 'engineer' });
    const second = await board.create({ subject: 'second', role: 'engineer', blockedBy: [first.id] });
    await board.create({ subject: 'review', role: 'reviewer' });
    expect((await board.scanUnclaimed('engineer')).map((t) => t.subject)).toEqual(['first']);
    expect(await board.claim(first.id, 'rev', { role: 'reviewer' })).toMatchObject({ ok: false, reason: expect.stringMatching(/for role engineer/) });
    expect(await board.claim(second.id, 'eng', { role: 'engineer' })).toMatchObject({ ok: false, reason: expect.stringMatching(/blocked by #/) });
    const claimed = await board.claimNext('eng', 'engineer');
    expect(claimed).toMatchObject({ ok: true, task: { id: first.id } });
    expect(await board.claimNext('eng2', 'engineer')).toBeNull();
    await board.complete(first.id, { owner: 'eng', token: 1 }, 'done');
    expect((await board.get(second.id)).blockedBy).toEqual([]);
    const next = await board.claimNext('eng', 'engineer');
    expect(next).toMatchObject({ ok: true, task: { id: second.id } });
    // A failed attempt backs off: nobody may claim it before retryAt.
    const retryAt = new Date(Date.now() + 60_000);
    expect(await board.retryLater(second.id, { owner: 'eng', token: 1 }, 'model error', retryAt)).toMatchObject({ ok: true, task: { attempts: 1, status: 'pending' } });
    expect(await board.claimNext('eng', 'engineer')).toBeNull();
    expect(await board.claim(second.id, 'eng')).toMatchObject({ ok: false, reason: expect.stringMatching(/backing off until/) });
  });

  it('a claimer of role `any` may take a task of every role, and of none', async () => {
    const board = await open(await backend.location());
    const engineering = await board.create({ subject: 'implement', role: 'engineer' });
    const general = await board.create({ subject: 'general' });
    const review = await board.create({ subject: 'review', role: 'reviewer' });
    expect((await board.scanUnclaimed('any')).map((t) => t.id)).toEqual([engineering.id, general.id, review.id]);
    expect(await board.claim(review.id, 'generalist', { role: 'any' })).toMatchObject({ ok: true, task: { id: review.id, owner: 'generalist' } });
    expect(await board.claimNext('generalist-2', 'any')).toMatchObject({ ok: true, task: { id: engineering.id } });
    expect(await board.claimNext('generalist-2', 'any')).toMatchObject({ ok: true, task: { id: general.id } });
    expect(await board.claimNext('generalist-2', 'any')).toBeNull();
  });

  it('claimNext takes the oldest claimable task first, as posted', async () => {
    const board = await open(await backend.location());
    const ids: number[] = [];
    for (let n = 0; n < 12; n++) ids.push((await board.create({ subject: `req ${n}`, role: 'analyst' })).id);
    const order: number[] = [];
    for (let n = 0; n < 12; n++) {
      const claimed = await board.claimNext(`analyst-${n}`, 'analyst');
      if (claimed?.ok) order.push(claimed.task.id);
    }
    expect(order).toEqual(ids);
  });

  it('a task posted held (its TaskCreated hooks deciding) is claimable only once the hold is let go', async () => {
    const board = await open(await backend.location());
    const held = await board.create({ subject: 'held', role: 'engineer', notBefore: new Date(Date.now() + 60_000).toISOString() });
    expect(await board.claimNext('eng', 'engineer')).toBeNull();
    expect(await board.claim(held.id, 'eng')).toMatchObject({ ok: false, reason: expect.stringMatching(/held until its TaskCreated hooks decide/) });
    expect(await board.update(held.id, { notBefore: null })).toMatchObject({ ok: true, task: { notBefore: null } });
    expect(await board.claimNext('eng', 'engineer')).toMatchObject({ ok: true, task: { id: held.id, owner: 'eng' } });
  });

  it('cancel, update with an artifacts function, and usage', async () => {
    const board = await open(await backend.location());
    const task = await board.create({ subject: 'work', artifacts: { checks: [] } });
    const claim = await board.claim(task.id, 'eng');
    const fence = { owner: 'eng', token: 1 };
    expect(claim.ok).toBe(true);
    board.recordUsage(task.id, { inputTokens: 10, outputTokens: 5 });
    board.recordUsage(task.id, { inputTokens: 1, outputTokens: 1 });
    // A model call costs no write of its own: the task's next write carries it.
    expect((await board.get(task.id)).usage.calls).toBe(0);
    expect(board.unwrittenUsage(task.id)).toEqual({ calls: 2, inputTokens: 11, outputTokens: 6 });
    const updated = await board.update(task.id, { artifacts: (current) => ({ ...current, summary: `had ${Object.keys(current).length} keys` }) }, { fence, event: 'noted', detail: 'x' });
    expect(updated).toMatchObject({ ok: true, task: { usage: { calls: 2, inputTokens: 11, outputTokens: 6 }, artifacts: { summary: 'had 1 keys', checks: [] } } });
    expect(board.unwrittenUsage(task.id).calls).toBe(0);
    expect(await board.cancel(task.id, 'lead', 'not needed')).toMatchObject({ ok: true, task: { status: 'cancelled', lease: null } });
    // A call after the claim ended: the refused write gives it back, and flushUsage writes it all the same.
    board.recordUsage(task.id, { inputTokens: 1, outputTokens: 1 });
    expect(await board.renewLease(task.id, fence)).toMatchObject({ ok: false, fenced: true });
    expect(board.unwrittenUsage(task.id).calls).toBe(1);
    await board.flushUsage(task.id);
    expect((await board.get(task.id)).usage).toEqual({ calls: 3, inputTokens: 12, outputTokens: 7 });
    expect(board.unwrittenUsage(task.id).calls).toBe(0);
    expect(await board.cancel(task.id, 'lead', 'again')).toMatchObject({ ok: false, reason: expect.stringMatching(/is cancelled/) });
  });

  it("each model call is carried by exactly one write, when one holder's writes race", async () => {
    const board = await open(await backend.location());
    const task = await board.create({ subject: 'work' });
    const claim = await board.claim(task.id, 'eng');
    expect(claim.ok).toBe(true);
    const fence = { owner: 'eng', token: 1 };
    for (let round = 0; round < 3; round++) {
      for (let call = 0; call < 4; call++) board.recordUsage(task.id, { inputTokens: 2, outputTokens: 1 });
      const writes = await Promise.all([
        board.renewLease(task.id, fence),
        board.update(task.id, { artifacts: { summary: `round ${round}` } }, { fence, event: 'noted' }),
        board.renewLease(task.id, fence),
      ]);
      expect(writes.every((write) => write.ok)).toBe(true);
    }
    expect((await board.get(task.id)).usage).toEqual({ calls: 12, inputTokens: 24, outputTokens: 12 });
    expect(board.unwrittenUsage(task.id).calls).toBe(0);
  });

  it('3 processes × 4 claimers race over 300 tasks: each claimed exactly once', async () => {
    const location = await backend.location();
    const board = await open(location);
    for (let i = 0; i < 300; i++) await board.create({ subject: `task ${i}` });
    const ids = (await board.list()).map((task) => task.id);
    const actors: Actor<ClaimReport>[] = [];
    for (let p = 0; p < 3; p++) {
      const owners = [0, 1, 2, 3].map((c) => `p${p}c${c}`);
      // One process in three takes ids directly, in random order, instead of claimNext.
      actors.push(Actor.process(`process ${p}`, { kind: 'claim', root: location, owners, mode: p === 2 ? 'direct' : 'next', ids }, true));
    }
    await startTogether(actors);
    const reports = await Promise.all(actors.map((actor) => actor.result));
    const winners = new Map<number, string[]>();
    for (const report of reports) {
      expect(report.errors).toEqual([]);
      for (const [owner, claimed] of Object.entries(report.claimed)) for (const id of claimed) winners.set(id, [...(winners.get(id) ?? []), owner]);
    }
    expect([...winners].filter(([, owners]) => owners.length > 1)).toEqual([]);
    expect([...winners.keys()].sort((a, b) => a - b)).toEqual(ids);
    // Other processes wrote: catch up (the PostgreSQL board reads a replica; the file board reads fresh).
    await board.refresh();
    for (const task of await board.list()) {
      expect(task).toMatchObject({ status: 'in_progress', claims: 1, owner: winners.get(task.id)![0] });
    }
    // At least two processes won claims: the race was real (a late starter may find the board empty).
    expect(new Set([...winners.values()].map(([owner]) => owner!.slice(0, 2))).size).toBeGreaterThanOrEqual(2);
  });
});

describe.each(backends)('$name: inboxes, registry, requests', (backend) => {
  async function board(location?: string) {
    const where = location ?? (await backend.location());
    const opened = await openBoard(where, isPostgresUrl(where) ? tempRootFor() : where);
    boards.push(opened);
    return opened;
  }

  it('refuses an unknown recipient, naming the members; delivers in order and drains once', async () => {
    const b = await board();
    await b.registry.ensure('crew');
    await b.registry.join('eng', 'engineer');
    await expect(b.mailbox.send('lead', 'nobody', 'hi')).rejects.toThrow(/'nobody' is not a member of team 'crew' \(members: lead, eng\)/);
    for (let i = 0; i < 5; i++) await b.mailbox.send('lead', 'eng', `m${i}`);
    expect((await b.mailbox.drain('eng')).map((m) => m.content)).toEqual(['m0', 'm1', 'm2', 'm3', 'm4']);
    expect(await b.mailbox.drain('eng')).toEqual([]);
    await b.mailbox.restore('eng', [{ id: 'x1', type: 'message', from: 'lead', to: 'eng', content: 'again', at: new Date().toISOString() }]);
    expect((await b.mailbox.drain('eng')).map((m) => m.content)).toEqual(['again']);
  });

  it('two processes draining while a third sends 300 messages: every message taken exactly once', async () => {
    const location = await backend.location();
    const b = await board(location);
    await b.registry.ensure('crew');
    await b.registry.join('eng', 'engineer');
    const stopFile = path.join(tempRootFor(), 'sent');
    const drainers = [0, 1].map((i) => Actor.process<string[]>(`drainer ${i}`, { kind: 'drain', root: location, name: 'eng', stopFile }, true));
    const sender = Actor.process<number>('sender', { kind: 'send', root: location, from: 'lead', to: 'eng', count: 300 }, true);
    await startTogether([...drainers, sender]);
    expect(await sender.result).toBe(300);
    // Every message is in: the drainers stop at their next empty drain.
    fs.writeFileSync(stopFile, '');
    const got = (await Promise.all(drainers.map((d) => d.result))).flat();
    expect(got.length).toBe(300);
    expect(new Set(got).size).toBe(300);
  });

  it('registry: a live name held by another process is refused; status updates are kept', async () => {
    const b = await board();
    await b.registry.ensure('crew');
    // The parent process (alive) holds 'eng': this process may not take it.
    await b.registry.join('eng', 'engineer', { pid: process.ppid });
    await expect(b.registry.join('eng', 'engineer')).rejects.toThrow(/'eng' is already a live member of team 'crew'/);
    await b.registry.join('rev', 'reviewer');
    await b.registry.setStatus('rev', 'working', { task: 3, reason: 'reviewing' });
    expect(b.registry.get('rev')).toMatchObject({ status: 'working', task: 3, reason: 'reviewing' });
    expect(b.registry.names()).toEqual(['lead', 'eng', 'rev']);
  });

  it('requests: decided once, listed by filter', async () => {
    const b = await board();
    const request = await b.requests.create({ kind: 'plan', from: 'eng', to: 'lead', plan: 'step 1' });
    expect(b.requests.list({ status: 'pending' }).map((r) => r.id)).toEqual([request.id]);
    expect(await b.requests.resolve(request.id, true)).toMatchObject({ ok: true, request: { status: 'approved' } });
    expect(await b.requests.resolve(request.id, false, 'too late')).toMatchObject({ ok: false, request: { status: 'approved' } });
    expect(b.requests.get(request.id).status).toBe('approved');
    expect(() => b.requests.get('plan-missing')).toThrow(/no request 'plan-missing'/);
  });
});

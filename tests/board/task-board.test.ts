import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type BoardProblem, TaskBoard, withLock, writeJsonAtomic } from '../../src/core/board/index.js';
import { fileBoard } from '../../src/core/board/board.js';
import { BoardFileError, NotFoundError } from '../../src/core/errors.js';
import { JOURNAL, journalKey, keyOf } from '../../src/core/board/task-index.js';
import { tempRoot } from '../helpers/board-spawn.js';
import { until } from '../helpers/agent-wait.js';

describe('TaskBoard', () => {
  let root = '';
  let board: TaskBoard;
  beforeEach(() => {
    root = tempRoot();
    board = new TaskBoard(root);
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  /** Tasks one and two, a reader that sweeps every `sweepMs` and has listed them, the journal, and a task file's key. */
  async function journaledPair(sweepMs: number): Promise<{ reader: TaskBoard; journal: string; fileKey: (id: number) => string }> {
    const reader = new TaskBoard(root, { sweepMs });
    await board.create({ subject: 'one' });
    await board.create({ subject: 'two' });
    expect(reader.list()).toHaveLength(2);
    return { reader, journal: path.join(board.dir, JOURNAL), fileKey: (id) => journalKey(fs.statSync(board.taskPath(id))) };
  }

  it("hands back a dead owner's claim that its writer renamed in but was killed before journaling", async () => {
    // A reader that sweeps the folder only every minute, and has read the task pending.
    const reader = new TaskBoard(root, { sweepMs: 60_000 });
    const task = await board.create({ subject: 'run `sleep 20`', role: 'engineer' });
    expect(reader.get(task.id).status).toBe('pending');
    expect(reader.list().find((t) => t.id === task.id)?.status).toBe('pending');
    // The claim's file renamed in, and no journal line: its writer died between the two (a SIGKILL).
    const at = new Date().toISOString();
    writeJsonAtomic(board.taskPath(task.id), { ...board.get(task.id), status: 'in_progress', owner: 'e9', claims: 1, lease: { owner: 'e9', token: 1, until: at }, updatedAt: at });
    expect(await reader.reclaimAllFrom('e9', 'e9 is dead (pid 1 is not running)')).toEqual([task.id]);
    expect(board.get(task.id)).toMatchObject({ status: 'pending', owner: null });
  });

  it('skips a candidate of its last scan that another claimed since, even when its index has read that claim meanwhile', async () => {
    /** Counts the claims it tries: a stale candidate tried costs a lock and a read. */
    class Counting extends TaskBoard {
      tried: number[] = [];
      override claim(id: number, owner: string, options?: { role?: string; tryOnce?: boolean }) {
        this.tried.push(id);
        return super.claim(id, owner, options);
      }
    }
    const mine = new Counting(root);
    for (const subject of ['one', 'two', 'three']) await board.create({ subject, role: 'engineer' });
    const subject = (claim: Awaited<ReturnType<TaskBoard['claimNext']>>) => (claim?.ok ? claim.task.subject : null);
    expect(subject(await mine.claimNext('eve', 'engineer'))).toBe('one');
    // Another claimer takes two; this board's index reads that claim before its next claim.
    expect((await board.claim(2, 'bob')).ok).toBe(true);
    expect(mine.list().find((task) => task.id === 2)?.owner).toBe('bob');
    mine.tried = [];
    expect(subject(await mine.claimNext('eve', 'engineer'))).toBe('three');
    expect(mine.tried).toEqual([3]);
  });

  it('creates, gets and lists tasks as readable 2-space JSON', async () => {
    const a = await board.create({ subject: 'Analyse', description: 'the ask', role: 'analyst', stage: 'requirements', by: 'lead' });
    const b = await board.create({ subject: 'Build', pipeline: 1 });
    expect(a).toMatchObject({ id: 1, status: 'pending', owner: null, role: 'analyst', stage: 'requirements', claims: 0 });
    expect(a.history).toEqual([{ at: a.createdAt, by: 'lead', event: 'created', detail: 'Analyse' }]);
    expect(board.get(2)).toEqual(b);
    expect(board.list()).toEqual([a, b]);
    const text = fs.readFileSync(board.taskPath(1), 'utf8');
    expect(text).toBe(`${JSON.stringify(a, null, 2)}\n`);
    expect(() => board.get(99)).toThrow(NotFoundError);
  });

  it('keeps a blocked task unclaimable until its blocker completes', async () => {
    const blocker = await board.create({ subject: 'first' });
    const blocked = await board.create({ subject: 'second', blockedBy: [blocker.id] });
    expect(board.get(blocker.id).blocks).toEqual([blocked.id]);
    await expect(board.create({ subject: 'x', blockedBy: [42] })).rejects.toThrow(NotFoundError);

    expect(board.scanUnclaimed().map((t) => t.id)).toEqual([blocker.id]);
    const refused = await board.claim(blocked.id, 'eve');
    expect(refused).toEqual({ ok: false, reason: `task #${blocked.id} is blocked by #${blocker.id}` });

    const claimed = await board.claim(blocker.id, 'ann');
    expect(claimed.ok).toBe(true);
    expect((await board.claim(blocked.id, 'eve')).ok).toBe(false);
    expect((await board.complete(blocker.id, 'ann', 'done')).ok).toBe(true);

    const unblocked = board.get(blocked.id);
    expect(unblocked.blockedBy).toEqual([]);
    expect(unblocked.history.at(-1)).toMatchObject({ event: 'unblocked', detail: `#${blocker.id} completed` });
    expect(board.scanUnclaimed().map((t) => t.id)).toEqual([blocked.id]);
    const next = await board.claimNext('eve');
    expect(next).toMatchObject({ ok: true, task: { id: blocked.id, owner: 'eve' } });
  });

  it('filters by role: a role-less task is anyone\'s, a role task only its role\'s', async () => {
    await board.create({ subject: 'general' });
    await board.create({ subject: 'review', role: 'reviewer' });
    await board.create({ subject: 'build', role: 'engineer' });
    expect(board.scanUnclaimed('reviewer').map((t) => t.subject)).toEqual(['general', 'review']);
    expect(board.scanUnclaimed().map((t) => t.subject)).toEqual(['general', 'review', 'build']);
    expect(await board.claim(3, 'rita', { role: 'reviewer' })).toEqual({
      ok: false,
      reason: 'task #3 is for role engineer, not reviewer',
    });
    const first = await board.claimNext('rita', 'reviewer');
    const second = await board.claimNext('rita', 'reviewer');
    expect([first?.ok && first.task.id, second?.ok && second.task.id].sort()).toEqual([1, 2]);
    expect(await board.claimNext('rita', 'reviewer')).toBeNull();
  });

  it('reports corrupt and schema-invalid files by path and field, and keeps working around them', async () => {
    const problems: BoardProblem[] = [];
    // sweepMs 0: every read sweeps, so the hand edits below are seen at once.
    board = new TaskBoard(root, { onProblem: (problem) => problems.push(problem), sweepMs: 0 });
    await board.create({ subject: 'good one' });
    const bogus = await board.create({ subject: 'bogus status' });
    const broken = await board.create({ subject: 'broken json' });
    await board.create({ subject: 'good two' });
    writeJsonAtomic(board.taskPath(bogus.id), { ...bogus, status: 'bogus' });
    fs.writeFileSync(board.taskPath(broken.id), '{"id": 3, "subject": ');

    expect(board.list().map((t) => t.subject)).toEqual(['good one', 'good two']);
    const reported = board.problems();
    expect(reported.map((p) => p.path).sort()).toEqual([board.taskPath(bogus.id), board.taskPath(broken.id)]);
    expect(reported.find((p) => p.path === board.taskPath(bogus.id))!.message).toMatch(/status/);
    expect(reported.find((p) => p.path === board.taskPath(broken.id))!.message).toMatch(/not valid JSON/);
    // Reported once per bad file version, not on every scan.
    board.list();
    expect(problems).toHaveLength(2);

    expect(() => board.get(bogus.id)).toThrow(BoardFileError);
    try {
      board.get(bogus.id);
    } catch (error) {
      expect((error as BoardFileError).path).toBe(board.taskPath(bogus.id));
      expect((error as Error).message).toContain('status');
    }
    expect(board.scanUnclaimed().map((t) => t.subject)).toEqual(['good one', 'good two']);
    expect((await board.claimNext('ann'))?.ok).toBe(true);
    expect((await board.claimNext('ann'))?.ok).toBe(true);
    expect(await board.claimNext('ann')).toBeNull();

    // A repaired file comes back and its problem goes away.
    writeJsonAtomic(board.taskPath(bogus.id), bogus);
    expect(board.list().map((t) => t.id)).toContain(bogus.id);
    expect(board.problems().map((p) => p.path)).toEqual([board.taskPath(broken.id)]);
  });

  it('serves list() from its index and re-reads only what the journal says changed', async () => {
    board = new TaskBoard(root, { sweepMs: 60_000 });
    await board.create({ subject: 'one' });
    await board.create({ subject: 'two' });
    const first = board.list();
    expect(board.list()).toBe(first);

    // Another process rewrites a file atomically: journaled, seen at once.
    const other = new TaskBoard(root);
    await other.update(2, { subject: 'two, renamed' });
    const second = board.list();
    expect(second).not.toBe(first);
    expect(second.map((t) => t.subject)).toEqual(['one', 'two, renamed']);
    expect(board.list()).toBe(second);

    // A hand edit in place is not journaled: a warm read does not look at the other files at all…
    const file = board.taskPath(1);
    fs.writeFileSync(file, `${JSON.stringify({ ...board.get(1), subject: 'one, edited in place' }, null, 2)}\n`);
    await other.create({ subject: 'three' });
    expect(board.list().map((t) => t.subject)).toEqual(['one', 'two, renamed', 'three']);
    // …and the next sweep sees it (here: a fresh reader, which always starts with one).
    expect(new TaskBoard(root).list().map((t) => t.subject)).toEqual(['one, edited in place', 'two, renamed', 'three']);
  });

  it('sees hand edits, new files and deletions at the next sweep (sweepMs)', async () => {
    await board.create({ subject: 'one' });
    await board.create({ subject: 'two' });
    const reader = new TaskBoard(root, { sweepMs: 100 });
    expect(reader.list()).toHaveLength(2);
    fs.writeFileSync(board.taskPath(1), `${JSON.stringify({ ...board.get(1), subject: 'one, by hand' }, null, 2)}\n`);
    fs.rmSync(board.taskPath(2));
    await until(() => reader.list().map((t) => t.subject).join() === 'one, by hand', 'the sweep to see the hand edits');
    expect(reader.list().map((t) => t.id)).toEqual([1]);
  });

  it("takes a written version from the journal's copy only while the file still holds that version", async () => {
    const { reader, journal, fileKey } = await journaledPair(60_000);

    // The copy is what a warm reader uses: a line naming the file's current key is taken as it is.
    await board.update(1, { subject: 'one, renamed' });
    const line = fs.readFileSync(journal, 'utf8').trimEnd().split('\n').at(-1)!;
    expect(line.startsWith(`1 ${fileKey(1)} {`)).toBe(true);
    expect(JSON.parse(line.slice(line.indexOf('{')))).toEqual(board.get(1));
    fs.appendFileSync(journal, `1 ${fileKey(1)} ${JSON.stringify({ ...board.get(1), subject: 'one, as the journal has it' })}\n`);
    expect(reader.list().map((t) => t.subject)).toEqual(['one, as the journal has it', 'two']);

    // A file changed since its line was written (a hand edit) is read from the file.
    await board.update(2, { subject: 'two, renamed' });
    fs.writeFileSync(board.taskPath(2), `${JSON.stringify({ ...board.get(2), subject: 'two, edited by hand' }, null, 2)}\n`);
    expect(reader.list().map((t) => t.subject)).toEqual(['one, as the journal has it', 'two, edited by hand']);

    // A line that is not a task, or names only the id (a task too large to copy), means "read the file".
    await board.update(1, { subject: 'one, third time' });
    fs.appendFileSync(journal, `1 ${fileKey(1)} {not json\n`);
    expect(reader.list().map((t) => t.subject)).toEqual(['one, third time', 'two, edited by hand']);
    fs.writeFileSync(board.taskPath(2), `${JSON.stringify({ ...board.get(2), subject: 'two, by hand again' }, null, 2)}\n`);
    fs.appendFileSync(journal, '2\n');
    expect(reader.list().map((t) => t.subject)).toEqual(['one, third time', 'two, by hand again']);

    // A copy is taken unvalidated only from a writer with this TaskSchema: a line of another shape
    // (another version of autoteam on the board, whose tasks may lack a field), or of the format
    // before shapes, is read from the file, and validated there.
    for (const shape of ['0123456789ab/', '']) {
      await board.update(1, { subject: `one, shape '${shape}'` });
      const { usage: _usage, ...older } = board.get(1);
      const key = `${shape}${keyOf(fs.statSync(board.taskPath(1)))}`;
      fs.appendFileSync(journal, `1 ${key} ${JSON.stringify({ ...older, subject: 'one, as another version wrote it' })}\n`);
      expect(reader.list()[0]).toMatchObject({ subject: `one, shape '${shape}'`, usage: { calls: 0 } });
    }
  });

  it('vouches for a version its writer journaled (get and the read under a write skip validating it), never for a hand edit', async () => {
    const { reader } = await journaledPair(60_000);
    await board.update(1, { subject: 'one, renamed' });
    expect(reader.list()[0]!.subject).toBe('one, renamed');
    const file = board.taskPath(1);
    const index = (reader as unknown as { index: { holds(id: number, stat: fs.Stats): boolean } }).index;
    expect(index.holds(1, fs.statSync(file))).toBe(true);

    expect(reader.get(1)).toEqual(board.get(1));
    const text = fs.readFileSync(file, 'utf8');

    // A hand edit is a new version: validated, refused with the field named, by a read and by a write.
    fs.writeFileSync(file, `${text.replace('"status": "pending"', '"status": "someday"')}\n`);
    expect(index.holds(1, fs.statSync(file))).toBe(false);
    expect(() => reader.get(1)).toThrow(BoardFileError);
    expect(() => reader.get(1)).toThrow(/status/);
    await expect(reader.claim(1, 'analyst')).rejects.toThrow(/status/);

    // A file written by hand with only a subject, seen by a sweep: not its writer's, so read and
    // completed (status, owner, times) as a hand-written file is, then claimed.
    fs.writeFileSync(board.taskPath(3), JSON.stringify({ subject: 'three, by hand' }));
    const sweeper = new TaskBoard(root, { sweepMs: 0 });
    expect(sweeper.list().map((task) => task.id)).toContain(3);
    expect(index.holds(3, fs.statSync(board.taskPath(3)))).toBe(false);
    const claimed = await sweeper.claim(3, 'analyst');
    expect(claimed).toMatchObject({ ok: true, task: { id: 3, status: 'in_progress', owner: 'analyst', subject: 'three, by hand' } });
  });

  it('reads the journal before a sweep, so the sweep reads only the files the journal does not name', async () => {
    // sweepMs 0: every read sweeps. A reader that has seen the board once…
    const { reader, journal, fileKey } = await journaledPair(0);
    // …then task 1 is written, and its journal line names the file's version with a copy that says
    // otherwise: the copy is what the refresh took, so the sweep did not read that file again.
    await board.update(1, { subject: 'one, renamed' });
    fs.appendFileSync(journal, `1 ${fileKey(1)} ${JSON.stringify({ ...board.get(1), subject: 'one, as the journal has it' })}\n`);
    // A hand edit the journal does not name is the sweep's, in the same read.
    fs.writeFileSync(board.taskPath(2), `${JSON.stringify({ ...board.get(2), subject: 'two, edited by hand' }, null, 2)}\n`);
    expect(reader.list().map((t) => t.subject)).toEqual(['one, as the journal has it', 'two, edited by hand']);
  });

  it("posts a task once its post is in the log, without holding the board's ids meanwhile", async () => {
    const team = fileBoard(root);
    // The log's lock held elsewhere: the post waits to be logged before its file is written…
    let letLogGo!: () => void;
    const logHeld = withLock(path.join(root, '.team', 'events.jsonl'), () => new Promise<void>((resolve) => (letLogGo = resolve)));
    const tasks = team.tasks as TaskBoard;
    const posting = tasks.create({ subject: 'first' });
    await until(() => fs.existsSync(path.join(tasks.dir, '.next-id')), 'the post to take its id');
    expect(fs.existsSync(tasks.taskPath(1))).toBe(false);
    // …and the ids are free meanwhile: another post is not queued behind that wait.
    await expect(withLock(path.join(tasks.dir, 'ids'), () => 'free', { retries: 0 })).resolves.toBe('free');
    letLogGo();
    await logHeld;
    expect((await posting).id).toBe(1);
    expect((await team.log.read()).map((event) => event.type)).toEqual(['task_posted']);
    await team.close();
  });

  it("removes a writer's temp file left over a minute by a crash at its next sweep, and no other .tmp file", async () => {
    await board.create({ subject: 'one' });
    const leftover = path.join(board.dir, 'task_1.json.4242.0.0badc0de.tmp');
    const fresh = path.join(board.dir, `task_1.json.${process.pid}.0.1234abcd.tmp`);
    const mine = path.join(board.dir, 'notes.tmp');
    for (const file of [leftover, fresh, mine]) fs.writeFileSync(file, '{');
    const old = new Date(Date.now() - 5 * 60_000);
    for (const file of [leftover, mine]) fs.utimesSync(file, old, old);
    expect(new TaskBoard(root).list()).toHaveLength(1);
    expect([leftover, fresh, mine].map((file) => fs.existsSync(file))).toEqual([false, true, true]);
  });

  it('a lost or rotated journal costs one sweep, never a missed change', async () => {
    const reader = new TaskBoard(root, { sweepMs: 60_000 });
    await board.create({ subject: 'one' });
    expect(reader.list()).toHaveLength(1);
    fs.rmSync(path.join(board.dir, '.journal'));
    fs.writeFileSync(board.taskPath(1), `${JSON.stringify({ ...board.get(1), subject: 'one, after the journal went' }, null, 2)}\n`);
    await board.create({ subject: 'two' });
    expect(reader.list().map((t) => t.subject)).toEqual(['one, after the journal went', 'two']);
  });

  it('refuses a write fenced by a superseded claim and leaves the file unchanged', async () => {
    let nowMs = Date.parse('2026-01-01T00:00:00.000Z');
    const clock = () => new Date(nowMs);
    board = new TaskBoard(root, { now: clock, leaseMs: 30_000 });
    await board.create({ subject: 'work' });
    const first = await board.claim(1, 'ann');
    if (!first.ok) throw new Error(first.reason);
    expect(first.task.lease).toEqual({ owner: 'ann', token: 1, until: '2026-01-01T00:00:30.000Z' });

    // Before the lease runs out nobody else can take it.
    nowMs += 29_000;
    expect(board.scanUnclaimed()).toEqual([]);
    expect((await board.claim(1, 'bob')).ok).toBe(false);

    nowMs += 2_000;
    expect(board.scanUnclaimed().map((t) => t.id)).toEqual([1]);
    const takeover = await board.claim(1, 'ann');
    if (!takeover.ok) throw new Error(takeover.reason);
    expect(takeover.task.claims).toBe(2);
    expect(takeover.task.history.at(-1)).toMatchObject({
      by: 'ann',
      event: 'claimed',
      detail: 'lease of ann expired; taken over (token 2)',
    });

    // The same owner name with the old token is a stale claim: refused, file byte-for-byte unchanged.
    const before = fs.readFileSync(board.taskPath(1), 'utf8');
    const stale = await board.complete(1, { owner: 'ann', token: 1 }, 'late result');
    expect(stale.ok).toBe(false);
    expect(stale.ok || stale.reason).toContain('superseded');
    expect(fs.readFileSync(board.taskPath(1), 'utf8')).toBe(before);
    expect((await board.update(1, { result: 'x' }, { fence: { owner: 'ann', token: 1 } })).ok).toBe(false);
    expect((await board.complete(1, { owner: 'bob' })).ok).toBe(false);
    expect(fs.readFileSync(board.taskPath(1), 'utf8')).toBe(before);

    const done = await board.complete(1, { owner: 'ann', token: 2 }, 'result');
    expect(done).toMatchObject({ ok: true, task: { status: 'completed', lease: null, result: 'result' } });
    expect((await board.complete(1, 'ann')).ok).toBe(false);
  });

  it('lets another owner take over an expired lease, and renewLease keeps it', async () => {
    let nowMs = Date.parse('2026-01-01T00:00:00.000Z');
    board = new TaskBoard(root, { now: () => new Date(nowMs), leaseMs: 10_000 });
    await board.create({ subject: 'work' });
    const claim = await board.claim(1, 'ann');
    if (!claim.ok) throw new Error(claim.reason);
    nowMs += 8_000;
    expect((await board.renewLease(1, { owner: 'ann', token: 1 })).ok).toBe(true);
    nowMs += 8_000;
    expect((await board.claim(1, 'bob')).ok).toBe(false);
    nowMs += 3_000;
    const taken = await board.claim(1, 'bob');
    expect(taken).toMatchObject({ ok: true, task: { owner: 'bob', claims: 2, lease: { owner: 'bob', token: 2 } } });
    expect(board.get(1).history.map((h) => h.event)).toEqual(['created', 'claimed', 'claimed']);
    expect(board.get(1).history.at(-1)!.detail).toBe('lease of ann expired; taken over (token 2)');
    expect((await board.renewLease(1, { owner: 'ann', token: 1 })).ok).toBe(false);
    expect((await board.fail(1, 'ann', 'too late')).ok).toBe(false);
  });

  it('releases a claim back to pending, and fails a task', async () => {
    await board.create({ subject: 'a' });
    await board.create({ subject: 'b' });
    expect((await board.claim(1, 'ann')).ok).toBe(true);
    expect((await board.release(1, 'bob')).ok).toBe(false);
    const released = await board.release(1, 'ann', 'need input');
    expect(released).toMatchObject({ ok: true, task: { status: 'pending', owner: null, lease: null } });
    expect(board.get(1).history.at(-1)).toMatchObject({ by: 'ann', event: 'released', detail: 'need input' });
    expect(board.scanUnclaimed().map((t) => t.id)).toEqual([1, 2]);
    expect((await board.release(1, 'ann')).ok).toBe(false);

    const claim = await board.claim(2, 'bob');
    if (!claim.ok) throw new Error(claim.reason);
    const failed = await board.fail(2, { owner: 'bob', token: claim.task.claims }, 'tests do not pass');
    expect(failed).toMatchObject({ ok: true, task: { status: 'failed', result: 'tests do not pass', lease: null } });
    expect(board.get(2).history.at(-1)).toMatchObject({ event: 'failed', detail: 'tests do not pass' });
    expect(board.scanUnclaimed().map((t) => t.id)).toEqual([1]);
    expect(await board.claim(2, 'ann')).toEqual({ ok: false, reason: 'task #2 is failed' });
  });

  it('leaves no temp files or lock directories behind', async () => {
    for (let i = 0; i < 5; i++) await board.create({ subject: `t${i}` });
    await Promise.all([1, 2, 3].map((id) => board.claim(id, `o${id}`)));
    await board.complete(1, 'o1');
    const names = fs.readdirSync(board.dir).filter((n) => !/^task_\d+\.json$/.test(n) && n !== '.next-id' && n !== '.locks' && n !== '.journal');
    expect(names).toEqual([]);
    // Only this thread's owner file, which its locks link to, stays.
    expect(fs.readdirSync(path.join(board.dir, '.locks'))).toEqual([expect.stringMatching(/^owner-\d+-\d+-[0-9a-f]{8}$/)]);
    expect(path.basename(board.dir)).toBe('.tasks');
  });
});

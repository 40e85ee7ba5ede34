/**
 * What people write by hand, and what they should not be able to break the board with: tasks in the
 * lesson's format, its team config and inbox lines, oversized task files, locks dated in the future.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { withLock } from '../../src/core/board/lock.js';
import { Mailbox } from '../../src/core/board/mailbox.js';
import { TaskBoard } from '../../src/core/board/task-board.js';
import { TeamRegistry } from '../../src/core/board/team-registry.js';
import { DOWNLOADS_REQUIREMENT, describeRun, runCli } from '../helpers/pipeline-cli.js';

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) fs.rmSync(root, { recursive: true, force: true });
});

function board(): string {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-formats-')));
  roots.push(root);
  fs.mkdirSync(path.join(root, '.tasks'));
  fs.mkdirSync(path.join(root, '.team', 'inbox'), { recursive: true });
  return root;
}

describe('hand-written files', () => {
  it("a task in the lesson's own format is listed, claimed and then written in full", async () => {
    const root = board();
    const lesson = { id: 1, subject: 'Write the changelog', description: 'for 0.2', status: 'pending', owner: '', blockedBy: [], blocks: [] };
    fs.writeFileSync(path.join(root, '.tasks', 'task_1.json'), JSON.stringify(lesson));
    fs.writeFileSync(path.join(root, '.tasks', 'task_2.json'), JSON.stringify({ subject: 'Only a subject' }));
    const tasks = new TaskBoard(root);
    expect(tasks.problems()).toEqual([]);
    expect(tasks.list().map((t) => ({ id: t.id, subject: t.subject, status: t.status, owner: t.owner }))).toEqual([
      { id: 1, subject: 'Write the changelog', status: 'pending', owner: null },
      { id: 2, subject: 'Only a subject', status: 'pending', owner: null },
    ]);
    const claim = await tasks.claim(1, 'eng');
    expect(claim).toMatchObject({ ok: true, task: { owner: 'eng', status: 'in_progress' } });
    const written = JSON.parse(fs.readFileSync(path.join(root, '.tasks', 'task_1.json'), 'utf8')) as Record<string, unknown>;
    expect(written).toMatchObject({ id: 1, owner: 'eng', claims: 1, history: [expect.objectContaining({ event: 'claimed' })] });
    expect(written.createdAt).toEqual(expect.any(String));
  });

  it("the lesson's team config (team_name) and inbox lines ({type, from, content, timestamp}) are read", async () => {
    const root = board();
    fs.writeFileSync(path.join(root, '.team', 'config.json'), JSON.stringify({ team_name: 'lesson-team', members: [{ name: 'alice', role: 'engineer', status: 'idle' }] }));
    const registry = new TeamRegistry(root);
    expect(registry.read()).toMatchObject({ team: 'lesson-team', lead: 'lead', members: [{ name: 'alice', role: 'engineer', status: 'idle' }] });
    fs.writeFileSync(path.join(root, '.team', 'inbox', 'alice.jsonl'), `${JSON.stringify({ type: 'message', from: 'lead', content: 'hello alice', timestamp: 1767225600.5 })}\n`);
    const messages = await new Mailbox(root).drain('alice');
    expect(messages).toEqual([
      expect.objectContaining({ type: 'message', from: 'lead', to: 'alice', content: 'hello alice', at: '2026-01-01T00:00:00.500Z', id: expect.stringMatching(/^line-[0-9a-f]{16}$/) }),
    ]);
    // A timestamp written as a date is read as one; one that is no date is named in the rejection.
    fs.writeFileSync(path.join(root, '.team', 'inbox', 'alice.jsonl'), `${JSON.stringify({ type: 'message', from: 'lead', content: 'dated', timestamp: '2026-01-01T10:00:00+02:00' })}\n${JSON.stringify({ from: 'lead', content: 'undated', timestamp: 'soon' })}\n`);
    const mailbox = new Mailbox(root);
    expect((await mailbox.drain('alice')).map(({ content, at }) => ({ content, at }))).toEqual([{ content: 'dated', at: '2026-01-01T08:00:00.000Z' }]);
    expect(mailbox.takeRejected('alice')).toMatchObject({ count: 1 });
    // autoteam writes its own format from then on, keeping the team's name.
    await registry.join('bob', 'reviewer');
    expect(JSON.parse(fs.readFileSync(path.join(root, '.team', 'config.json'), 'utf8'))).toMatchObject({ team: 'lesson-team', members: [{ name: 'alice' }, { name: 'bob' }] });
    expect(JSON.parse(fs.readFileSync(path.join(root, '.team', 'config.json'), 'utf8'))).not.toHaveProperty('team_name');
    // A team_name that is not a string is named in the error, not silently dropped.
    fs.writeFileSync(path.join(root, '.team', 'config.json'), JSON.stringify({ team_name: 5 }));
    expect(() => registry.read()).toThrow(/config\.json: .*team_name: a string is expected, not a number; fix it/);
    fs.rmSync(path.join(root, '.team', 'config.json'));
    fs.mkdirSync(path.join(root, '.team', 'config.json'));
    expect(() => registry.read()).toThrow(/config\.json: is a folder, not a file; fix it/);
    await expect(registry.join('carol', 'engineer')).rejects.toThrow(/config\.json: is a folder, not a file; fix it/);
  });
});

describe('what must not break the board', () => {
  it('a task file over the size limit is a problem, never read, and the others are listed', async () => {
    const root = board();
    const tasks = new TaskBoard(root);
    await tasks.create({ subject: 'small' });
    const big = { id: 2, subject: 'big', description: 'x'.repeat(6 * 1024 * 1024), status: 'pending' };
    fs.writeFileSync(path.join(root, '.tasks', 'task_2.json'), JSON.stringify(big));
    expect(tasks.list().map((t) => t.id)).toEqual([1]);
    expect(tasks.problems()).toEqual([{ path: path.join(root, '.tasks', 'task_2.json'), message: expect.stringMatching(/6\.0 MB is over the 5 MB limit for a task file; it is not read$/) }]);
    expect(() => tasks.get(2)).toThrow(/over the 5 MB limit/);
    expect(await tasks.claimNext('eng')).toMatchObject({ ok: true, task: { id: 1 } });
  });

  it('a lock directory dated in the future is taken over, not waited on forever', async () => {
    const root = board();
    const file = path.join(root, '.tasks', 'task_1.json');
    const lockDir = path.join(root, '.tasks', '.locks', 'task_1.json.lock');
    fs.mkdirSync(lockDir, { recursive: true });
    const future = new Date(Date.now() + 24 * 3600_000);
    fs.utimesSync(lockDir, future, future);
    // A try-lock (no retries): taken over on the first attempt, not after waiting for it to go stale.
    expect(await withLock(file, () => 'got it', { staleMs: 2_000, retries: 0 })).toBe('got it');
    expect(fs.existsSync(lockDir)).toBe(false);
  });

  it('refuses a requirement over 100 KB, and a --dir that is a file, in one line with exit 2', async () => {
    const root = board();
    const huge = await runCli(['run', '--auto', '--dir', root, 'x'.repeat(101 * 1024)], { cwd: root });
    expect(huge.code, describeRun(huge)).toBe(2);
    expect(huge.stderr.trim()).toBe('autoteam: a requirement is at most 100 KB (this one is 101 KB): put the details in a file and refer to it');
    expect(fs.readdirSync(path.join(root, '.tasks'))).toEqual([]);
    const file = path.join(root, 'not-a-dir');
    fs.writeFileSync(file, 'x');
    for (const args of [['run', '--auto', '--dir', file, 'x'], ['worker', '--name', 'e', '--role', 'engineer', '--dir', file], ['--dir', file]]) {
      const run = await runCli(args, { cwd: root });
      expect(run.code, describeRun(run)).toBe(2);
      expect(run.stderr.trim()).toBe(`autoteam: --dir: ${file} is a file, not a directory`);
    }
    const under = await runCli(['run', '--auto', '--dir', path.join(file, 'sub'), 'x'], { cwd: root });
    expect(under.code).toBe(2);
    expect(under.stderr.trim()).toBe(`autoteam: --dir: cannot use ${path.join(file, 'sub')} as a board (a part of the path is a file)`);
    // A board's own folder given for the board: named, and no board made inside it.
    for (const inner of ['.tasks', '.team']) {
      fs.mkdirSync(path.join(root, inner), { recursive: true });
      for (const args of [['tasks', '--dir', path.join(root, inner)], ['run', '--auto', '--dir', path.join(root, inner), 'x']]) {
        const run = await runCli(args, { cwd: root });
        expect(run.code, describeRun(run)).toBe(2);
        expect(run.stderr.trim()).toBe(`autoteam: --dir: ${path.join(root, inner)} is where a board keeps its ${inner.slice(1)}; the board is the folder above it: --dir ${root}`);
      }
      expect(fs.existsSync(path.join(root, inner, '.tasks'))).toBe(false);
    }
    // Started in it, with no --dir: the same, saying where to go.
    const inside = await runCli(['tasks'], { cwd: path.join(root, '.tasks') });
    expect(inside.code, describeRun(inside)).toBe(2);
    expect(inside.stderr.trim()).toBe(`autoteam: ${path.join(root, '.tasks')} is where a board keeps its tasks; the board is the folder above it: cd ${root}`);
    // A folder that only has the name, a board of its own inside, is a board like any other.
    const named = path.join(board(), '.team');
    fs.mkdirSync(path.join(named, '.tasks'), { recursive: true });
    expect((await runCli(['tasks', '--dir', named], { cwd: root })).code).toBe(0);
    const stages = await runCli(['stages', '--dir', root], { cwd: root });
    expect(stages.code).toBe(0);
    // Folders no board can live in, whatever their permission bits say (root passes every access check).
    if (process.platform === 'linux') {
      for (const dir of ['/proc', '/sys']) {
        const run = await runCli(['run', '--auto', '--dir', dir, 'x'], { cwd: root });
        expect(run.code, describeRun(run)).toBe(2);
        // Root is refused at the folder it tries to make; anyone else already by the permission bits.
        expect(run.stderr.trim()).toMatch(new RegExp(`^autoteam: --dir: cannot use ${dir} as a board \\((not writable|no folder can be made there: ENOENT)\\)$`));
      }
      // A board whose own folder cannot be written (another user's, say; here one /sys stands for):
      // named by the commands that write, not a bare EACCES from a lock; the ones that read still read.
      const foreign = board();
      fs.rmSync(path.join(foreign, '.tasks'), { recursive: true, force: true });
      fs.symlinkSync('/sys', path.join(foreign, '.tasks'));
      for (const args of [['post', '--dir', foreign, 'x'], ['worker', '--role', 'engineer', '--dir', foreign]]) {
        const run = await runCli(args, { cwd: foreign });
        expect(run.code, describeRun(run)).toBe(2);
        expect(run.stderr.trim()).toMatch(new RegExp(`^autoteam: --dir: cannot use ${foreign} as a board \\(its ${path.join(foreign, '.tasks')} is (not writable|no folder can be made there: ENOENT)\\)$`));
      }
      expect((await runCli(['tasks', '--dir', foreign], { cwd: foreign })).code).toBe(0);
    }
  });

  // One run on a board that holds both what another writer left: a broken task file and a pipeline it cannot finish.
  it('a run on a board holding a broken task file and another pipeline finishes its own work, names the file it skipped, and says the other is still active', async () => {
    const root = board();
    // A pipeline whose next stage is for a role no teammate of this run has: it cannot finish here.
    await new TaskBoard(root).create({ subject: 'Requirements: an older request', role: 'ghost', stage: 'requirements', pipeline: 4 });
    const broken = path.join(root, '.tasks', 'task_7.json');
    fs.writeFileSync(broken, '{"subject": "half written",');
    const run = await runCli(['run', '--auto', '--dir', root, DOWNLOADS_REQUIREMENT], { cwd: root });
    expect(run.code, describeRun(run)).toBe(0);
    expect(run.stdout).toMatch(/pipeline #\d+: APPROVED/);
    expect(run.stderr).toContain(`autoteam: skipped ${broken}: not valid JSON`);
    expect(fs.readFileSync(broken, 'utf8')).toBe('{"subject": "half written",');
    // `tasks` says the totals it prints leave the broken file out.
    const listed = await runCli(['tasks', '--dir', root], { cwd: root });
    expect(listed.code, describeRun(listed)).toBe(0);
    expect(listed.stdout).toMatch(/^pipeline #\d+ approved · \d+ model calls/m);
    expect(listed.stderr.trim()).toMatch(new RegExp(`^skipped ${broken.replace(/[.]/g, '\\.')}: not valid JSON .* \\(left out of the list and from the pipelines' totals\\)$`));
    expect(run.stderr + run.stdout).toContain('note: the board already has 1 open task (#1); the team works those too while this run lasts');
    expect(run.stderr + run.stdout).toContain('note: pipeline #4 is still active on the board: a lead (autoteam) or a worker there goes on with it');
  });
});

/**
 * The merge queue end to end on the offline model: two pipelines on one repository both write
 * organize.py (the person answers their name-conflict question differently, so the two programs
 * differ). With `autoMerge` the lead merges the first as it is approved; the second conflicts, goes
 * back to the engineer with the conflict markers in its worktree, is revised, approved again, and
 * merged once the first's checks pass on it too.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { TeamEvent } from '../../src/core/events/schema.js';
import { LeadSession } from '../../src/core/lead/session.js';
import { playbookAnswer } from '../../src/core/model/scripted/playbook.js';
import { HANG_MS } from '../helpers/agent-wait.js';
import { describeRun, DOWNLOADS_REQUIREMENT, readTasks, runCli, tempBoard } from '../helpers/pipeline-cli.js';
import { firstCommit, personGit } from '../helpers/person-git.js';

const python = spawnSync('python3', ['--version']).status === 0;
const roots: string[] = [];
afterAll(() => {
  for (const root of roots) fs.rmSync(root, { recursive: true, force: true });
});

const git = personGit;

type MergeStepEvent = Extract<TeamEvent, { type: 'merge_step' }>;

/** A repository with one commit: a README.md, and autoteam.config.json with autoMerge on. */
function autoMergeRepo(prefix: string): string {
  const repo = tempBoard(prefix);
  roots.push(repo);
  git(repo, 'init', '-q', '-b', 'main');
  fs.writeFileSync(path.join(repo, 'README.md'), '# A project\n');
  fs.writeFileSync(path.join(repo, 'autoteam.config.json'), '{ "autoMerge": true }\n');
  git(repo, 'add', '.');
  git(repo, 'commit', '-q', '-m', 'Initial commit');
  return repo;
}

/** A repository whose pipeline #1 a run without autoMerge left approved, its branch kept, nothing merged; then autoMerge turned on in its config. */
async function approvedThenAutoMerge(prefix: string): Promise<string> {
  const repo = tempBoard(prefix);
  roots.push(repo);
  firstCommit(repo);
  const run = await runCli(['run', '--auto', DOWNLOADS_REQUIREMENT], { cwd: repo });
  expect(run.code, describeRun(run)).toBe(0);
  expect(readTasks(repo).some((task) => task.artifacts.outcome)).toBe(false);
  fs.writeFileSync(path.join(repo, 'autoteam.config.json'), '{ "autoMerge": true }\n');
  git(repo, 'add', 'autoteam.config.json');
  git(repo, 'commit', '-q', '-m', 'Merge approved work by itself');
  return repo;
}

describe.runIf(python)('the merge queue with autoMerge', () => {
  it('merges the first of two pipelines editing organize.py, sends the second back with the conflict, and merges it after its revision', { timeout: 600_000 }, async () => {
    const repo = tempBoard('autoteam-mq-');
    roots.push(repo);
    git(repo, 'init', '-q', '-b', 'main');
    fs.writeFileSync(path.join(repo, 'README.md'), '# A project\n');
    git(repo, 'add', 'README.md');
    git(repo, 'commit', '-q', '-m', 'Initial commit');
    const start = git(repo, 'rev-parse', 'HEAD');
    const session = new LeadSession({ rootDir: repo, model: { kind: 'offline', reason: 'test' }, settings: { pollMs: 100 }, autoMerge: true });
    const steps: MergeStepEvent[] = [];
    let first = 0;
    // The second's questions wait for the first's merge: it began before, so it conflicts, and the
    // first is merged first (the queue's order is the approvals').
    let firstMerged = () => {};
    const firstIn = new Promise<void>((resolve) => (firstMerged = resolve));
    const merged = new Promise<void>((resolve, reject) => {
      const timeout = AbortSignal.timeout(4 * HANG_MS);
      timeout.addEventListener('abort', () => reject(new Error(`not both merged in time; merge steps: ${JSON.stringify(steps.map((s) => [s.pipeline, s.step, s.detail]))}`)));
      session.subscribe((event) => {
        if (event.type === 'question') {
          // Both skip a file whose name is taken; the second also warns: two programs, and the second's
          // does what the first's checks hold, so it merges once they pass on it.
          const { questionId, question, pipeline } = event.question;
          const skips = /same name|exist/i.test(question);
          const answer = skips ? (pipeline === first ? 'Skip it: leave the file where it is.' : 'Skip it, and print a warning that names the file.') : playbookAnswer(question, []);
          void (pipeline === first ? Promise.resolve() : firstIn).then(() => session.answer(answer, questionId)).catch(() => undefined);
        }
        if (event.type !== 'team' || event.event.type !== 'merge_step') return;
        steps.push(event.event);
        if (event.event.step === 'merged' && event.event.pipeline === first) firstMerged();
        if (steps.filter((step) => step.step === 'merged').length === 2) resolve();
      });
    });
    try {
      await session.start();
      const a = await session.post(DOWNLOADS_REQUIREMENT);
      first = a.pipeline!;
      const b = await session.post('Write a Python script that sorts the files of a folder into subfolders by file type.');
      await merged;

      const mergedOrder = steps.filter((step) => step.step === 'merged').map((step) => step.pipeline);
      expect(mergedOrder).toEqual([a.pipeline, b.pipeline]);
      const [firstMerged, secondMerged] = mergedOrder as [number, number];
      const sentBack = steps.filter((step) => step.step === 'sent_back');
      expect(sentBack.map((step) => step.pipeline)).toEqual([secondMerged]);
      expect(sentBack[0]!.detail).toMatch(/^conflict with main in organize\.py; revision \d+ is #\d+; the approved commit was [0-9a-f]{12}$/);
      expect(steps.filter((step) => step.pipeline === firstMerged).map((step) => step.step)).not.toContain('sent_back');
      // The revision was checked against what the first merged: the first's checks ran on its tree.
      const checked = steps.filter((step) => step.pipeline === secondMerged && step.step === 'checked').at(-1);
      expect(checked?.detail).toMatch(new RegExp(`^pipeline #${firstMerged}'s CHK\\d+.* pass on the reviewed tree$`));

      // The revision was handed the conflict as a blocker, and worked from the markers in its worktree.
      const revision = session.stateOf(secondMerged).tasks.find((task) => task.stage === 'implementation' && task.artifacts.issues?.some((issue) => /conflicts in organize\.py/.test(issue.text)));
      expect(revision?.artifacts.issues?.[0]?.severity).toBe('blocker');
      expect(session.stateOf(secondMerged).tasks.find((task) => task.artifacts.outcome)?.artifacts.outcome).toMatchObject({ action: 'merged', into: 'main' });

      // main moved forward by the two approvals, as fast-forwards in the person's own (clean) tree.
      expect(git(repo, 'rev-list', '--count', `${start}..main`)).toBe('2');
      expect(git(repo, 'rev-list', '--merges', '--count', `${start}..main`)).toBe('0');
      expect(git(repo, 'status', '--porcelain')).toBe('');
      expect(fs.readFileSync(path.join(repo, 'organize.py'), 'utf8')).not.toMatch(/^(<<<<<<<|=======|>>>>>>>)/m);
      expect(git(repo, 'branch', '--list', 'autoteam/*')).toBe('');
    } finally {
      await session.close(2_000);
    }
  });
});

describe.runIf(python)('autoMerge in line mode', () => {
  it('at the end of input, waits while the queue sends an approved pipeline back, and ends once its revision is merged', { timeout: 600_000 }, async () => {
    const repo = autoMergeRepo('autoteam-mq-line-');
    const posted = await runCli(['post', DOWNLOADS_REQUIREMENT], { cwd: repo });
    expect(posted.code, describeRun(posted)).toBe(0);
    // main moves on under the pipeline's branch: the engineer's organize.py will conflict with this one.
    fs.writeFileSync(path.join(repo, 'organize.py'), 'print("mine")\n');
    git(repo, 'add', 'organize.py');
    git(repo, 'commit', '-q', '-m', 'My own organize.py');

    const line = await runCli(['--auto'], { cwd: repo, input: '', killAfterMs: 500_000 });
    expect(line.code, describeRun(line)).toBe(0);
    const out = line.stdout;
    const sentBack = out.search(/^merge #1: sent back — conflict with main in organize\.py; revision 2 is #\d+; the approved commit was [0-9a-f]{12}$/m);
    const merged = out.search(/^merge #1: merged — fast-forward to [0-9a-f]{12}$/m);
    const down = out.indexOf('shutting the team down');
    expect([sentBack, merged].every((at) => at >= 0), out).toBe(true);
    // The team worked the revision before it was shut down, and the queue merged it.
    expect(sentBack).toBeLessThan(merged);
    expect(merged).toBeLessThan(down);
    expect(readTasks(repo).find((task) => task.artifacts.outcome)?.artifacts.outcome).toMatchObject({ action: 'merged', into: 'main' });
    expect(git(repo, 'status', '--porcelain')).toBe('');
  });
});

describe.runIf(python)("autoMerge at a lead's start", () => {
  it('merges what an earlier lead left approved and unmerged as the next lead starts, with no approval to wait for', { timeout: 300_000 }, async () => {
    const repo = await approvedThenAutoMerge('autoteam-mq-start-');

    const session = new LeadSession({ rootDir: repo, model: { kind: 'offline', reason: 'test' }, settings: { pollMs: 100 }, autoMerge: true });
    const merged = new Promise<MergeStepEvent>((resolve, reject) => {
      AbortSignal.timeout(2 * HANG_MS).addEventListener('abort', () => reject(new Error('not merged in time')));
      session.subscribe((event) => {
        if (event.type === 'team' && event.event.type === 'merge_step' && event.event.step === 'merged') resolve(event.event);
      });
    });
    try {
      await session.start([]);
      expect(await merged).toMatchObject({ pipeline: 1 });
    } finally {
      await session.close(1_000);
    }
    expect(readTasks(repo).find((task) => task.artifacts.outcome)?.artifacts.outcome).toMatchObject({ action: 'merged', into: 'main' });
    expect(git(repo, 'status', '--porcelain')).toBe('');
  });

  it('autoteam run with autoMerge merges what an earlier lead left approved as it starts, though its own pipeline fails', { timeout: 300_000 }, async () => {
    const repo = await approvedThenAutoMerge('autoteam-mq-run-start-');
    // No revision allowed: the offline reviewer's first send-back fails this run's own pipeline, so no approval of its own drains the queue.
    const second = await runCli(['run', '--auto', '--max-revisions', '0', DOWNLOADS_REQUIREMENT], { cwd: repo });
    expect(second.code, describeRun(second)).toBe(1);
    expect(second.stdout, describeRun(second)).toMatch(/merge #1: merged/);
    const tasks = readTasks(repo);
    expect(tasks.find((task) => task.pipeline === 1 && task.artifacts.outcome)?.artifacts.outcome).toMatchObject({ action: 'merged', into: 'main' });
    expect(tasks.some((task) => task.pipeline === 2 && task.artifacts.outcome)).toBe(false);
    expect(git(repo, 'status', '--porcelain')).toBe('');
  });

  it("autoteam run with autoMerge, the base checked out with a change of the person's: the summary says the approved pipeline is not merged, and why", { timeout: 300_000 }, async () => {
    const repo = autoMergeRepo('autoteam-mq-run-dirty-');
    fs.writeFileSync(path.join(repo, 'README.md'), '# A project, being written\n');
    const run = await runCli(['run', '--auto', DOWNLOADS_REQUIREMENT], { cwd: repo });
    expect(run.code, describeRun(run)).toBe(0);
    expect(run.stdout).toMatch(/^pipeline #1: APPROVED/m);
    expect(run.stdout, describeRun(run)).toMatch(/^branch: autoteam\/1-\S+ from [0-9a-f]{12} · commit [0-9a-f]{12} · not merged: .*uncommitted changes \(README\.md\).* \(autoteam merge --queue merges it then\)$/m);
    expect(fs.readFileSync(path.join(repo, 'README.md'), 'utf8')).toBe('# A project, being written\n');
    expect(readTasks(repo).some((task) => task.artifacts.outcome)).toBe(false);
  });

  it('autoMerge where pipelines have no branches (not a repository) is said to do nothing, by run and by the REPL\'s session', { timeout: 300_000 }, async () => {
    const dir = tempBoard('autoteam-mq-no-repo-');
    roots.push(dir);
    fs.writeFileSync(path.join(dir, 'autoteam.config.json'), '{ "autoMerge": true }\n');
    const said = 'autoMerge of autoteam.config.json does nothing here: pipelines work in workspace/<n>, not on branches (no git repository, or --no-worktree), so nothing is merged';
    // A requirement the offline engineer cannot implement: the run ends at once, having said it.
    const run = await runCli(['run', '--auto', 'Write a Python script that counts the lines in a text file.'], { cwd: dir });
    expect(run.code, describeRun(run)).toBe(1);
    expect(run.stderr.split('\n').filter((line) => line.includes('autoMerge'))).toEqual([`autoteam: warning: ${said}`]);
    expect(run.stdout).not.toContain('autoMerge');
    const session = new LeadSession({ rootDir: dir, model: { kind: 'offline', reason: 'test' }, settings: { pollMs: 100 }, autoMerge: true });
    const notices: string[] = [];
    session.subscribe((event) => {
      if (event.type === 'notice') notices.push(event.text);
    });
    try {
      await session.start([]);
      expect(notices).toContain(said);
    } finally {
      await session.close(1_000);
    }
  });
});

/**
 * What the merge queue and `merge <n>` take from a pipeline's branch: its own change, as approved.
 * A base rewritten after the pipeline began (a commit dropped, one amended) keeps its rewrite; commits
 * added after the approval are not merged; a branch deleted by hand comes back from the approved
 * commit; and a merge by hand waits for a drain of the queue instead of racing it. Real git, a real
 * file board, the real Pipeline and real sandboxed checks.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { queuedPipelines } from '../../src/core/lead/merge-queue.js';
import { rebaseOnto } from '../../src/core/git/rebase.js';
import { diffPipeline, discardPipeline, mergePipeline } from '../../src/core/lead/branches.js';
import { pipelineStatus } from '../../src/core/stages/pipeline-status.js';
import { commitFile, git, setup } from '../helpers/merge-queue-setup.js';

const exists = (file: string) => `import os\nassert os.path.exists(${JSON.stringify(file)})\n`;

describe("the merge queue merges the pipeline's own change", () => {
  it('a commit the person dropped from the base after the pipeline began does not come back (merge <n> refuses it; the queue leaves it out)', { timeout: 60_000 }, async () => {
    const { repo, board, queue, post } = await setup();
    const before = git(repo, 'rev-parse', 'main');
    const dropped = commitFile(repo, 'secrets.env', 'SECRET=oops\n', 'oops: a secret');
    const pipeline = await post('one.py', '"""One."""\n', exists('one.py'));
    git(repo, 'reset', '-q', '--hard', before);
    const { branch } = queuedPipelines(board.tasks.list())[0]!.git;
    await expect(mergePipeline(board.tasks, pipeline, 'lead')).rejects.toThrow(
      `cannot merge ${branch} into main: main no longer holds ${dropped.slice(0, 12)}, the commit ${branch} started from (it was rewritten since), so the commits before it would come along (nothing was merged); autoteam merge --queue (/merge all) rebases only its own commits onto main`,
    );
    expect(git(repo, 'rev-parse', 'main')).toBe(before);

    const [line] = await queue().drain();
    expect(line).toMatch(new RegExp(`^pipeline #${pipeline}: .* merged into main \\(fast-forward to [0-9a-f]{12}\\)`));
    expect(git(repo, 'ls-tree', '--name-only', 'main').split('\n').sort()).toEqual(['helper.py', 'one.py']);
    expect(git(repo, 'log', '--format=%s', 'main')).not.toContain('oops');
    expect(git(repo, 'rev-list', '--count', `${before}..main`)).toBe('1');
  });

  it('a base commit amended after the pipeline began keeps its amendment, with no conflict the pipeline did not make', { timeout: 60_000 }, async () => {
    const { repo, queue, post } = await setup();
    commitFile(repo, 'version.py', 'VERSION = "1.0"\n', 'add version');
    const pipeline = await post('one.py', '"""One."""\n', exists('one.py'));
    fs.writeFileSync(path.join(repo, 'version.py'), 'VERSION = "1.0.1"\n');
    git(repo, 'commit', '-q', '-a', '--amend', '-m', 'add version 1.0.1');

    const [line] = await queue().drain();
    expect(line).toMatch(new RegExp(`^pipeline #${pipeline}: .* merged into main`));
    expect(git(repo, 'show', 'main:version.py')).toBe('VERSION = "1.0.1"');
    expect(git(repo, 'show', 'main:one.py')).toBe('"""One."""');
  });

  it("sent back on a conflict, the worktree holds the pipeline's change over the tip and nothing of the base it dropped", { timeout: 60_000 }, async () => {
    const { repo, board, queue, post } = await setup();
    const before = git(repo, 'rev-parse', 'main');
    commitFile(repo, 'dropped.txt', 'dropped later\n', 'to be dropped');
    const pipeline = await post('helper.py', 'VALUE = 2\n', exists('helper.py'));
    git(repo, 'reset', '-q', '--hard', before);
    const tip = commitFile(repo, 'helper.py', 'VALUE = 3\n', 'the person changes the value');

    const [line] = await queue().drain();
    expect(line).toMatch(new RegExp(`^pipeline #${pipeline}: not merged — conflict with main in helper\\.py; sent back to implementation as revision 1`));
    const revision = board.tasks.list().filter((task) => task.pipeline === pipeline).at(-1)!;
    const { worktree } = revision.artifacts.git!;
    expect(git(worktree, 'rev-parse', 'HEAD')).toBe(tip);
    expect(fs.existsSync(path.join(worktree, 'dropped.txt'))).toBe(false);
    expect(git(worktree, 'status', '--porcelain')).toBe('M helper.py');
    expect(fs.readFileSync(path.join(worktree, 'helper.py'), 'utf8')).toMatch(/^<<<<<<< .*\nVALUE = 3\n=======\nVALUE = 2\n>>>>>>> /);
    // No cherry-pick or merge left under way in the worktree: the engineer's commit is an ordinary one.
    const gitDir = path.resolve(worktree, git(worktree, 'rev-parse', '--git-dir'));
    expect(['CHERRY_PICK_HEAD', 'MERGE_HEAD', 'MERGE_MSG'].filter((name) => fs.existsSync(path.join(gitDir, name)))).toEqual([]);
  });

  it('commits added to the branch after the approval are not merged; the line names both commits, how to keep them and how to put the branch back', { timeout: 60_000 }, async () => {
    const { repo, board, queue, post } = await setup();
    const pipeline = await post('one.py', '"""One."""\n', exists('one.py'));
    const { git: info } = queuedPipelines(board.tasks.list())[0]!;
    const head = git(repo, 'rev-parse', 'main');
    const added = commitFile(info.worktree, 'one.py', '"""One, changed after the review."""\n', 'my tweak');

    const [line] = await queue().drain();
    expect(line).toBe(
      `pipeline #${pipeline}: not merged — its branch ${info.branch} is at ${added.slice(0, 12)}, not at the approved commit ${info.commit.slice(0, 12)}: it changed after the approval, and only what was reviewed is merged (git -C ${repo} branch keep-${info.branch.replace(/^autoteam\//, '')} ${added.slice(0, 12)} keeps what it holds now; then git -C ${info.worktree} reset --hard ${info.commit.slice(0, 12)} puts it back) (it stays in the queue)`,
    );
    expect(git(repo, 'rev-parse', 'main')).toBe(head);
    await expect(mergePipeline(board.tasks, pipeline, 'lead')).rejects.toThrow(`pipeline #${pipeline} is not merged: its branch ${info.branch} is at ${added.slice(0, 12)}`);
    expect(git(repo, 'rev-parse', 'main')).toBe(head);

    git(info.worktree, 'reset', '-q', '--hard', info.commit);
    expect((await queue().drain())[0]).toMatch(/merged into main \(fast-forward/);
    expect(git(repo, 'show', 'main:one.py')).toBe('"""One."""');
  });

  it("a drain stopped between its rebase and its record left the branch on its own rebased copy: the next drain puts it back and merges", { timeout: 60_000 }, async () => {
    const { repo, board, queue, post } = await setup();
    const pipeline = await post('one.py', '"""One."""\n', exists('one.py'));
    const { git: info } = queuedPipelines(board.tasks.list())[0]!;
    const tip = commitFile(repo, 'z.txt', 'z\n', 'the person moves main');
    // What the stopped drain had done: the branch rebased onto the tip in its worktree, by the runtime, nothing recorded.
    expect((await rebaseOnto(info.worktree, tip, info.base, 'lead@crew')).kind).toBe('rebased');
    expect(git(repo, 'rev-parse', info.branch)).not.toBe(info.commit);

    const [line] = await queue().drain();
    expect(line).toMatch(new RegExp(`^pipeline #${pipeline}: .* merged into main \\(fast-forward to [0-9a-f]{12}\\)`));
    expect(git(repo, 'ls-tree', '--name-only', 'main').split('\n').sort()).toEqual(['helper.py', 'one.py', 'z.txt']);
  });

  it("a drain stopped after rebasing a change the base already held (no commit of its own, the branch on the base's tip): the next drain merges it as already in", { timeout: 60_000 }, async () => {
    const { repo, board, queue, post } = await setup();
    const pipeline = await post('one.py', '"""One."""\n', exists('one.py'));
    const { git: info } = queuedPipelines(board.tasks.list())[0]!;
    // The same change reached main another way (another pipeline merged it first).
    const tip = commitFile(repo, 'one.py', '"""One."""\n', 'the same change, merged first');
    // What the stopped drain had done: the rebase found nothing of its own, the branch now on main's tip.
    expect((await rebaseOnto(info.worktree, tip, info.base, 'lead@crew')).kind).not.toBe('conflict');
    expect(git(repo, 'rev-parse', info.branch)).toBe(tip);

    const [line] = await queue().drain();
    expect(line).toBe(`pipeline #${pipeline}: ${info.branch} merged into main (its change was already in main); its worktree and branch are removed`);
    expect(git(repo, 'rev-parse', 'main')).toBe(tip);
  });

  it("the person's own rewrite of the approved commit is not taken for the queue's; diff says the branch moved, and discard names what the branch held and the changes it dropped", { timeout: 60_000 }, async () => {
    const { repo, board, queue, post } = await setup();
    const pipeline = await post('one.py', '"""One."""\n', exists('one.py'));
    const { git: info } = queuedPipelines(board.tasks.list())[0]!;
    fs.writeFileSync(path.join(info.worktree, 'one.py'), '"""One, amended."""\n');
    git(info.worktree, 'commit', '-q', '-a', '--amend', '-m', 'amended by the person');
    const amended = git(repo, 'rev-parse', info.branch);

    const [line] = await queue().drain();
    expect(line).toContain(`not merged — its branch ${info.branch} is at ${amended.slice(0, 12)}, not at the approved commit ${info.commit.slice(0, 12)}: it changed after the approval`);
    expect(line).toContain(`git -C ${repo} branch keep-${info.branch.replace(/^autoteam\//, '')} ${amended.slice(0, 12)} keeps what it holds now`);
    expect(git(repo, 'rev-parse', info.branch)).toBe(amended);
    expect((await diffPipeline(board.tasks, pipeline)).split('\n')[0]).toContain(`commit ${info.commit.slice(0, 12)} — the branch has moved on since, to ${amended.slice(0, 12)}: this is it as it is now`);
    fs.writeFileSync(path.join(info.worktree, 'notes.txt'), 'mine\n');
    const discarded = await discardPipeline(board.tasks, pipeline, 'lead');
    expect(discarded).toContain(`its branch was at ${amended}, past the approved commit ${info.commit.slice(0, 12)} (git branch ${info.branch} ${amended.slice(0, 12)} brings it back while git keeps the commit, for you to merge with git: autoteam has let this pipeline go)`);
    expect(discarded).toMatch(/; its uncommitted changes \(notes\.txt\) went with the worktree$/);
  });

  it("sent back on a file the base deleted and the pipeline changed: the file as it was approved counts as the revision's change", { timeout: 60_000 }, async () => {
    const { repo, board, queue, post } = await setup();
    const before = git(repo, 'rev-parse', 'main');
    commitFile(repo, 'stub.py', 'print("stub")\n', 'a stub');
    const pipeline = await post('stub.py', '"""The real one."""\n', exists('stub.py'));
    git(repo, 'reset', '-q', '--hard', before);

    const [line] = await queue().drain();
    expect(line).toMatch(new RegExp(`^pipeline #${pipeline}: not merged — conflict with main in stub\\.py; sent back`));
    const revision = board.tasks.list().filter((task) => task.pipeline === pipeline).at(-1)!;
    expect(fs.readFileSync(path.join(revision.artifacts.git!.worktree, 'stub.py'), 'utf8')).toBe('"""The real one."""\n');
    // Not in what it was sent back with: submitting it unchanged is the fix, not "nothing changed".
    expect(Object.keys(revision.artifacts.submitted?.files ?? {})).not.toContain('stub.py');
  });

  it('a rebase left under way in the worktree by hand is named with its abort, not a stash that would fail on it', { timeout: 60_000 }, async () => {
    const { repo, board, queue, post } = await setup();
    const pipeline = await post('helper.py', 'VALUE = 2\n', exists('helper.py'));
    const { git: info } = queuedPipelines(board.tasks.list())[0]!;
    commitFile(repo, 'helper.py', 'VALUE = 3\n', 'the person changes the value');
    expect(spawnSync('git', ['rebase', 'main'], { cwd: info.worktree, env: { ...process.env, GIT_EDITOR: 'true' } }).status).not.toBe(0);

    const [line] = await queue().drain();
    expect(line).toBe(`pipeline #${pipeline}: not merged — a rebase is under way in its worktree ${info.worktree}: finish it, or abort it (git -C ${info.worktree} rebase --abort), then merge again (it stays in the queue)`);
    git(info.worktree, 'rebase', '--abort');
    expect((await queue().drain())[0]).toMatch(new RegExp(`^pipeline #${pipeline}: not merged — conflict with main in helper\\.py; sent back`));
  });

  it('a branch deleted by hand is made again from the approved commit, and merges', { timeout: 60_000 }, async () => {
    const { repo, board, queue, post } = await setup();
    const pipeline = await post('one.py', '"""One."""\n', exists('one.py'));
    const { git: info } = queuedPipelines(board.tasks.list())[0]!;
    git(repo, 'worktree', 'remove', '--force', info.worktree);
    git(repo, 'branch', '-q', '-D', info.branch);

    const [line] = await queue().drain();
    expect(line).toMatch(new RegExp(`^pipeline #${pipeline}: ${info.branch} merged into main \\(fast-forward to ${info.commit.slice(0, 12)}\\)`));
    expect(git(repo, 'show', 'main:one.py')).toBe('"""One."""');
    expect(git(repo, 'branch', '--list', 'autoteam/*')).toBe('');
  });
});

describe('merge <n> and discard <n> beside the queue', () => {
  it("merge <n> refuses a worktree holding work not committed since the approval (an edit, a new file), removing nothing; merges once it is stashed, and the stash keeps it", { timeout: 60_000 }, async () => {
    const { repo, board, post } = await setup();
    const pipeline = await post('one.py', '"""One."""\n', exists('one.py'));
    const { git: info } = queuedPipelines(board.tasks.list())[0]!;
    const main = git(repo, 'rev-parse', 'main');
    fs.writeFileSync(path.join(info.worktree, 'one.py'), '"""One, with my fix."""\n');
    fs.writeFileSync(path.join(info.worktree, 'NOTES.md'), 'mine\n');

    await expect(mergePipeline(board.tasks, pipeline, 'lead')).rejects.toThrow(
      `pipeline #${pipeline} is not merged: its worktree ${info.worktree} has changes that are not committed (one.py, NOTES.md): what merges is the approved commit as it was reviewed, and the merge removes the worktree with them; set them aside first (git -C ${info.worktree} stash --include-untracked: the stash outlives the worktree), then merge again`,
    );
    expect(git(repo, 'rev-parse', 'main')).toBe(main);
    expect(fs.readFileSync(path.join(info.worktree, 'NOTES.md'), 'utf8')).toBe('mine\n');
    expect(fs.readFileSync(path.join(info.worktree, 'one.py'), 'utf8')).toBe('"""One, with my fix."""\n');

    git(info.worktree, 'stash', '-q', '--include-untracked');
    expect(await mergePipeline(board.tasks, pipeline, 'lead')).toMatch(new RegExp(`^pipeline #${pipeline}: .* merged into main`));
    expect(fs.existsSync(info.worktree)).toBe(false);
    expect(git(repo, 'show', 'main:one.py')).toBe('"""One."""');
    // The stash is the repository's: the work is there after the worktree has gone.
    expect(git(repo, 'show', 'stash@{0}^3:NOTES.md')).toBe('mine');
    expect(git(repo, 'show', 'stash@{0}:one.py')).toBe('"""One, with my fix."""');
  });

  it("what the queue's own run of the checks leaves in the worktree (a test's output) is not taken for someone's work: after a wait for the base, the next drain merges", { timeout: 60_000 }, async () => {
    const { repo, queue, post } = await setup();
    // Its tests write a file beside them, in the worktree the queue runs them in again.
    const tests = 'import unittest\n\n\nclass T(unittest.TestCase):\n    def test_writes(self):\n        with open("out.txt", "w") as f:\n            f.write("made by the run")\n\n\nif __name__ == "__main__":\n    unittest.main()\n';
    const pipeline = await post('test_one.py', tests, exists('test_one.py'));
    commitFile(repo, 'other.txt', 'the person moves main on\n', 'another change');
    fs.writeFileSync(path.join(repo, 'helper.py'), 'VALUE = 1  # mine, not committed\n');

    const [waiting] = await queue().drain();
    expect(waiting).toMatch(new RegExp(`^pipeline #${pipeline}: waits — main is checked out in .* with uncommitted changes \\(helper\\.py\\)`));
    git(repo, 'stash', '-q');
    expect((await queue().drain())[0]).toMatch(new RegExp(`^pipeline #${pipeline}: .* merged into main`));
    git(repo, 'stash', 'pop', '-q');
    expect(git(repo, 'ls-tree', '--name-only', 'main').split('\n').sort()).toEqual(['helper.py', 'other.txt', 'test_one.py']);
  });

  it('a pipeline approved with nothing to commit (the base held its change) is not merged while its worktree holds work since', { timeout: 60_000 }, async () => {
    const { board, queue, post } = await setup();
    const pipeline = await post('helper.py', 'VALUE = 1\n', exists('helper.py'));
    const { git: info } = queuedPipelines(board.tasks.list())[0]!;
    fs.writeFileSync(path.join(info.worktree, 'NOTES.md'), 'mine\n');

    expect((await queue().drain())[0]).toMatch(new RegExp(`^pipeline #${pipeline}: not merged — its worktree ${info.worktree} has changes that are not committed \\(NOTES\\.md\\)`));
    expect(fs.readFileSync(path.join(info.worktree, 'NOTES.md'), 'utf8')).toBe('mine\n');
  });

  it('the queue leaves a pipeline whose worktree holds a new file of its own in the queue, naming it, and merges it once it is gone', { timeout: 60_000 }, async () => {
    const { repo, board, queue, post } = await setup();
    const pipeline = await post('one.py', '"""One."""\n', exists('one.py'));
    const { git: info } = queuedPipelines(board.tasks.list())[0]!;
    const main = git(repo, 'rev-parse', 'main');
    fs.writeFileSync(path.join(info.worktree, 'NOTES.md'), 'mine\n');

    const [line] = await queue().drain();
    expect(line).toBe(`pipeline #${pipeline}: not merged — its worktree ${info.worktree} has changes that are not committed (NOTES.md): what merges is the approved commit as it was reviewed, and the merge removes the worktree with them; set them aside first (git -C ${info.worktree} stash --include-untracked: the stash outlives the worktree), then merge again (it stays in the queue)`);
    expect(git(repo, 'rev-parse', 'main')).toBe(main);
    expect(fs.readFileSync(path.join(info.worktree, 'NOTES.md'), 'utf8')).toBe('mine\n');

    fs.rmSync(path.join(info.worktree, 'NOTES.md'));
    expect((await queue().drain())[0]).toMatch(new RegExp(`^pipeline #${pipeline}: ${info.branch} merged into main`));
  });

  it('merge <n> refuses a pipeline whose base the checked-out branch does not hold, naming it; merges on that base', { timeout: 60_000 }, async () => {
    const { repo, board, post } = await setup();
    git(repo, 'checkout', '-q', '-b', 'feat');
    const wip = commitFile(repo, 'feat.txt', 'unfinished\n', 'unfinished feature work');
    const pipeline = await post('one.py', '"""One."""\n', exists('one.py'));
    git(repo, 'checkout', '-q', 'main');
    const main = git(repo, 'rev-parse', 'main');

    const { branch } = queuedPipelines(board.tasks.list())[0]!.git;
    await expect(mergePipeline(board.tasks, pipeline, 'lead')).rejects.toThrow(
      `cannot merge ${branch} into main: main does not hold ${wip.slice(0, 12)}, the commit ${branch} started from on feat, so the commits before it would come along (nothing was merged); check out feat and merge it there, or autoteam merge --queue (/merge all) rebases only its own commits onto feat`,
    );
    expect(git(repo, 'rev-parse', 'main')).toBe(main);
    git(repo, 'checkout', '-q', 'feat');
    expect(await mergePipeline(board.tasks, pipeline, 'lead')).toMatch(new RegExp(`^pipeline #${pipeline}: .* merged into feat \\(fast-forward\\)`));
    expect(git(repo, 'rev-parse', 'main')).toBe(main);
  });

  it("diff of a pipeline that ended unapproved says so, not that its commit is still to come; discarded, it has no diff and no retry", { timeout: 60_000 }, async () => {
    const { board, pipelines } = await setup();
    const first = await pipelines.post('Add one.py.', { startStage: 'implementation' });
    fs.writeFileSync(path.join(first.artifacts.git!.worktree, 'one.py'), '"""One."""\n');
    expect((await diffPipeline(board.tasks, first.pipeline!)).split('\n')[0]).toMatch(/ · not committed yet · 1 file: A one\.py$/);
    // Still at work: cancelled first, in the words of the command line and of the REPL.
    await expect(discardPipeline(board.tasks, first.pipeline!, 'lead')).rejects.toThrow(`pipeline #${first.pipeline} is still active: cancel it first (autoteam cancel ${first.pipeline}, /cancel ${first.pipeline} in the REPL), then discard it`);
    await pipelines.cancel(first.pipeline!, 'lead', 'not needed');
    expect((await diffPipeline(board.tasks, first.pipeline!)).split('\n')[0]).toMatch(/ · cancelled, not approved: its worktree as it was left · 1 file: A one\.py$/);
    // Not merged; what can be done with it instead is said, in the words of both front ends.
    await expect(mergePipeline(board.tasks, first.pipeline!, 'lead')).rejects.toThrow(`pipeline #${first.pipeline} was cancelled: only approved work is merged; diff ${first.pipeline} shows it, retry ${first.pipeline} works it again, discard ${first.pipeline} drops it (each as autoteam <command> ${first.pipeline}, or /<command> ${first.pipeline} in the REPL)`);
    // Discarded, there is nothing left to show.
    await discardPipeline(board.tasks, first.pipeline!, 'lead');
    await expect(diffPipeline(board.tasks, first.pipeline!)).rejects.toThrow(`pipeline #${first.pipeline} was already discarded: its branch and worktree are gone`);
    // Nor anything to retry: its first task would fail at once on the worktree that is gone.
    const tasks = board.tasks.list().length;
    await expect(pipelines.retry(first.pipeline!, 'lead')).rejects.toThrow(`pipeline #${first.pipeline} was discarded: its branch and worktree are gone, so it cannot be retried (post its requirement again to work it anew)`);
    expect(board.tasks.list()).toHaveLength(tasks);
  });

  it('a discard given while the queue drains waits for the drain, and then finds the pipeline merged', { timeout: 60_000 }, async () => {
    const { repo, board, queue, post } = await setup();
    const pipeline = await post('one.py', '"""One."""\n', exists('one.py'));
    // The drain takes the board's merge lock as it is called; the discard comes while it rebases and checks.
    const drained = queue().drain();
    const discarded = discardPipeline(board.tasks, pipeline, 'lead').then(
      (line) => ({ line, error: null }),
      (error: Error) => ({ line: null, error: error.message }),
    );
    expect((await drained)[0]).toMatch(/merged into main/);
    expect(await discarded).toEqual({ line: null, error: expect.stringMatching(new RegExp(`^pipeline #${pipeline} was already merged into main \\([0-9a-f]{12}\\): there is no branch left to discard$`)) });
    // A discard given twice, like a merge given twice, is done already: no mistake.
    const second = await post('two.py', '"""Two."""\n', exists('two.py'));
    await discardPipeline(board.tasks, second, 'lead');
    expect(await discardPipeline(board.tasks, second, 'lead')).toBe(`pipeline #${second} was already discarded: nothing to do`);
    expect(git(repo, 'show', 'main:one.py')).toBe('"""One."""');
    expect(pipelineStatus(board.tasks.list().filter((task) => task.pipeline === pipeline))).toBe('approved');
    expect(board.tasks.list().find((task) => task.artifacts.outcome)?.artifacts.outcome?.action).toBe('merged');
  });
});

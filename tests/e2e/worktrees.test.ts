/**
 * The person's repository as the workplace, with real git in temp repositories: one worktree and
 * branch per pipeline, a commit on approval, and /diff /merge /discard. The CLI runs are the built
 * `dist/` (run `npx tsc -p tsconfig.build.json` first), the parallel pipelines a LeadSession in-process.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LeadSession } from '../../src/core/lead/session.js';
import { type CliResult, DOWNLOADS_REQUIREMENT, describeRun, readTasks, runCli, tempBoard } from '../helpers/pipeline-cli.js';
import { HANG_MS } from '../helpers/agent-wait.js';
import { firstCommit, personGit } from '../helpers/person-git.js';

const WORDCOUNT_REQUIREMENT = 'Write a Python script that counts the words in a text file.';
const python = spawnSync('python3', ['--version']).status === 0;
const roots: string[] = [];

/** git as the person runs it; the test's own commits carry an identity, the runtime's bring their own. */
const git = personGit;

/** A repository with one commit holding README.md, on branch main. */
function makeRepo(prefix = 'autoteam-repo-'): string {
  const root = tempBoard(prefix);
  roots.push(root);
  firstCommit(root);
  return root;
}

afterAll(() => {
  for (const root of roots) fs.rmSync(root, { recursive: true, force: true });
});

describe.runIf(python)('autoteam run on a git repository', () => {
  let repo = '';
  let run: CliResult;
  let head = '';
  let summary: { workspace: string; git?: { branch: string; base: string; commit: string | null; repo: string } };

  beforeAll(async () => {
    repo = makeRepo();
    head = git(repo, 'rev-parse', 'HEAD');
    run = await runCli(['run', '--auto', '--json', DOWNLOADS_REQUIREMENT], { cwd: repo });
    summary = JSON.parse(run.stdout || '{}') as typeof summary;
  });

  it('ends with a branch holding exactly the new file in one commit by autoteam, from the HEAD it started on', () => {
    expect(run.code, describeRun(run)).toBe(0);
    const info = summary.git!;
    expect(info.branch).toBe('autoteam/1-write-a-python-script-that-organizes-my');
    expect(info.base).toBe(head);
    expect(info.commit).toMatch(/^[0-9a-f]{40}$/);
    expect(git(repo, 'rev-parse', info.branch)).toBe(info.commit);
    expect(git(repo, 'rev-list', '--count', `${head}..${info.branch}`)).toBe('1');
    expect(git(repo, 'diff', '--name-status', head, info.branch)).toBe('A\torganize.py');
    expect(git(repo, 'log', '-1', '--format=%an <%ae>', info.branch)).toBe(`autoteam <reviewer@${path.basename(repo)}>`);
    const message = git(repo, 'log', '-1', '--format=%B', info.branch);
    expect(message.split('\n')[0]).toBe(DOWNLOADS_REQUIREMENT);
    expect(message).toMatch(/\[AC1\] .* — met: CHK\d+ passed/);
    expect(message).toMatch(/^Review: /m);
    expect(summary.workspace).toBe(path.join(repo, '.autoteam', 'worktrees', '1'));
  });

  it("leaves the person's branch, index and working tree untouched, and git status clean", () => {
    expect(git(repo, 'rev-parse', 'HEAD')).toBe(head);
    expect(git(repo, 'symbolic-ref', '--short', 'HEAD')).toBe('main');
    expect(git(repo, 'status', '--porcelain')).toBe('');
    expect(fs.existsSync(path.join(repo, 'organize.py'))).toBe(false);
    const exclude = fs.readFileSync(path.join(repo, '.git', 'info', 'exclude'), 'utf8');
    for (const entry of ['/.tasks/', '/.team/', '/.autoteam/', '/workspace/']) expect(exclude).toContain(entry);
  });

  it('records the branch on every task and hands the review the change against the base', () => {
    const tasks = readTasks(repo);
    for (const task of tasks) expect(task.artifacts.git?.branch).toBe(summary.git!.branch);
    const review = tasks.filter((task) => task.stage === 'review').at(-1)!;
    expect(review.artifacts.change?.files).toEqual([{ path: 'organize.py', status: 'A' }]);
    expect(review.artifacts.change?.diff).toMatch(/^\+\+\+ b\/organize\.py$/m);
    expect(review.handoff).toMatch(/Changes on autoteam\/1-\S+ against [0-9a-f]{12} \(1 file: A organize\.py\)/);
    expect(review.artifacts.git?.commit).toBe(summary.git!.commit);
  });

  it('`autoteam diff` shows the files and the diff; a conflicting merge is refused and changes nothing', async () => {
    const diff = await runCli(['diff', '1'], { cwd: repo });
    expect(diff.code, describeRun(diff)).toBe(0);
    expect(diff.stdout).toMatch(/^pipeline #1 · autoteam\/1-\S+ from [0-9a-f]{12} · commit [0-9a-f]{12} · 1 file: A organize\.py$/m);
    expect(diff.stdout).toMatch(/^\+"""Organize a folder/m);

    // The person writes their own organize.py meanwhile: merging the branch would conflict.
    fs.writeFileSync(path.join(repo, 'organize.py'), 'print("mine")\n');
    git(repo, 'add', 'organize.py');
    git(repo, 'commit', '-q', '-m', 'My own organizer');
    const before = { head: git(repo, 'rev-parse', 'HEAD'), file: fs.readFileSync(path.join(repo, 'organize.py'), 'utf8') };
    const merge = await runCli(['merge', '1'], { cwd: repo });
    expect(merge.code).toBe(1);
    expect(merge.stderr).toMatch(/merging autoteam\/1-\S+ into main conflicts in organize\.py; nothing was merged/);
    expect(merge.stderr).not.toMatch(/\n\s+at /);
    expect(git(repo, 'rev-parse', 'HEAD')).toBe(before.head);
    expect(fs.readFileSync(path.join(repo, 'organize.py'), 'utf8')).toBe(before.file);
    expect(git(repo, 'status', '--porcelain')).toBe('');
    expect(fs.existsSync(path.join(repo, '.git', 'MERGE_HEAD'))).toBe(false);
  });

  it('`autoteam discard` removes the worktree and the branch, and says so on the board', async () => {
    const discard = await runCli(['discard', '1'], { cwd: repo });
    expect(discard.code, describeRun(discard)).toBe(0);
    expect(discard.stdout).toMatch(/pipeline #1: worktree .* and branch autoteam\/1-\S+ removed/);
    expect(fs.existsSync(path.join(repo, '.autoteam', 'worktrees', '1'))).toBe(false);
    expect(git(repo, 'branch', '--list', 'autoteam/*')).toBe('');
    expect(git(repo, 'worktree', 'list', '--porcelain').match(/^worktree /gm)).toHaveLength(1);
    const outcome = readTasks(repo).find((task) => task.artifacts.outcome);
    expect(outcome?.artifacts.outcome).toMatchObject({ action: 'discarded' });
    const again = await runCli(['merge', '1'], { cwd: repo });
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/pipeline #1 was already discarded/);
  });
});

describe.runIf(python)('two pipelines in parallel on one repository', () => {
  // Two pipelines at once on the same two cores: twice a pipeline's time (180 s is for one).
  it('each gets its own worktree and branch, and both merge cleanly (a fast-forward, then a merge commit)', { timeout: 360_000 }, async () => {
    const repo = makeRepo();
    const head = git(repo, 'rev-parse', 'HEAD');
    const session = new LeadSession({ rootDir: repo, model: { kind: 'offline', reason: 'test' }, auto: true, settings: { pollMs: 100 } });
    const notices: string[] = [];
    session.on('event', (event) => {
      if (event.type === 'notice') notices.push(event.text);
    });
    try {
      await session.start([
        { name: 'analyst', role: 'analyst' },
        { name: 'engineer', role: 'engineer' },
        { name: 'engineer2', role: 'engineer' },
        { name: 'reviewer', role: 'reviewer' },
      ]);
      expect(notices.join('\n')).toMatch(/on your repository .* \(main at [0-9a-f]{7}\): each pipeline works in its own worktree/);
      const [a, b] = await Promise.all([session.post(DOWNLOADS_REQUIREMENT), session.post(WORDCOUNT_REQUIREMENT)]);
      // Still at work: not merged, and the way to drop it is the one /discard takes.
      await expect(session.merge(a.pipeline!)).rejects.toThrow(`pipeline #${a.pipeline} is still active: only approved work is merged; diff ${a.pipeline} shows it, cancel ${a.pipeline}, then discard ${a.pipeline} drops it (each as autoteam <command> ${a.pipeline}, or /<command> ${a.pipeline} in the REPL)`);
      const [first, second] = await Promise.all([
        session.waitForPipeline(a.pipeline!, AbortSignal.timeout(2 * HANG_MS)),
        session.waitForPipeline(b.pipeline!, AbortSignal.timeout(2 * HANG_MS)),
      ]);
      expect([first.status, second.status]).toEqual(['approved', 'approved']);
      const gitA = first.tasks.at(-1)!.artifacts.git!;
      const gitB = second.tasks.at(-1)!.artifacts.git!;
      expect(gitA.worktree).not.toBe(gitB.worktree);
      expect(gitA.branch).not.toBe(gitB.branch);
      expect([gitA.base, gitB.base]).toEqual([head, head]);
      expect(git(repo, 'diff', '--name-only', head, gitA.branch)).toBe('organize.py');
      expect(git(repo, 'diff', '--name-only', head, gitB.branch).split('\n').sort()).toEqual(['test_wordcount.py', 'wordcount.py']);

      const diff = await session.diff(b.pipeline!);
      expect(diff).toMatch(/2 files: A test_wordcount\.py, A wordcount\.py/);
      expect(await session.merge(a.pipeline!)).toMatch(/merged into main \(fast-forward\)/);
      expect(await session.merge(b.pipeline!)).toMatch(/merged into main \(merge commit\)/);
      expect(git(repo, 'ls-files').split('\n').sort()).toEqual(['README.md', 'organize.py', 'test_wordcount.py', 'wordcount.py']);
      expect(git(repo, 'status', '--porcelain')).toBe('');
      expect(git(repo, 'branch', '--list', 'autoteam/*')).toBe('');
      expect(fs.readdirSync(path.join(repo, '.autoteam', 'worktrees'))).toEqual([]);
      await expect(session.discard(a.pipeline!)).rejects.toThrow(/already merged into main/);
      // A merge given again is done already: said, not refused.
      expect(await session.merge(a.pipeline!)).toMatch(new RegExp(`^pipeline #${a.pipeline} was already merged into main at [0-9a-f]{12}: nothing to do$`));
      // Merged, its branch and worktree are gone: the diff is the change as approved.
      const merged = await session.diff(b.pipeline!);
      expect(merged).toMatch(new RegExp(`^pipeline #${b.pipeline} · merged into main at [0-9a-f]{12} · its commit [0-9a-f]{12} from [0-9a-f]{12}\n`));
      expect(merged).toMatch(/^\+\+\+ b\/wordcount\.py$/m);
      expect(merged).not.toMatch(/organize\.py/);
    } finally {
      await session.close(2_000);
    }
  });
});

describe.runIf(python)('a requirement run again once its change is in main', () => {
  it('is approved with nothing to commit, and the queue finds it already in main, main moved on or not', { timeout: 360_000 }, async () => {
    const repo = makeRepo();
    const first = await runCli(['run', '--auto', WORDCOUNT_REQUIREMENT], { cwd: repo });
    expect(first.code, describeRun(first)).toBe(0);
    expect((await runCli(['merge', '--queue'], { cwd: repo })).stdout).toMatch(/pipeline #1: .* merged into main \(fast-forward to [0-9a-f]{12}\)/);
    const merged = git(repo, 'rev-parse', 'HEAD');

    const again = await runCli(['run', '--auto', WORDCOUNT_REQUIREMENT], { cwd: repo });
    expect(again.code, describeRun(again)).toBe(0);
    expect(again.stdout).toMatch(/pipeline #2: APPROVED/);
    expect(again.stdout).toContain(`= Pipeline #2 approved: `);
    expect(again.stdout).toContain(`nothing to commit: the base ${merged.slice(0, 12)} already holds the reviewed files`);
    expect(again.stdout).toContain(`from ${merged.slice(0, 12)} · nothing to commit: the base already holds the reviewed files (autoteam merge|discard 2 removes the worktree)`);
    const approval = readTasks(repo).filter((task) => task.pipeline === 2).at(-1)!;
    expect(approval.artifacts.git).toMatchObject({ base: merged, commit: merged });

    // main moves on before the queue runs: the pipeline has nothing of its own to rebase or check, so it is merged as it is and nothing new lands.
    fs.writeFileSync(path.join(repo, 'NOTES.md'), 'notes\n');
    git(repo, 'add', 'NOTES.md');
    git(repo, 'commit', '-q', '-m', 'Notes');
    const tip = git(repo, 'rev-parse', 'HEAD');
    const queue = await runCli(['merge', '--queue'], { cwd: repo });
    expect(queue.code, describeRun(queue)).toBe(0);
    expect(queue.stdout).toMatch(/pipeline #2: autoteam\/2-\S+ merged into main \(its change was already in main\); its worktree and branch are removed/);
    expect(git(repo, 'rev-parse', 'HEAD')).toBe(tip);
    expect(git(repo, 'branch', '--list', 'autoteam/*')).toBe('');
    expect(git(repo, 'status', '--porcelain')).toBe('');
    const steps = (await runCli(['events', '--pipeline', '2'], { cwd: repo })).stdout;
    expect(steps).toMatch(/merge #2: queued — approved \d+ s ago; 1 of 1 in the queue\n.*merge #2: merged — its change was already in main/);
    expect(steps).not.toMatch(/merge #2: (rebased|checked)/);

    // A third time, merged by hand: nothing to merge, and the worktree and branch go.
    expect((await runCli(['run', '--auto', WORDCOUNT_REQUIREMENT], { cwd: repo })).code).toBe(0);
    const byHand = await runCli(['merge', '3'], { cwd: repo });
    expect(byHand.stdout.trim()).toMatch(/^pipeline #3: autoteam\/3-\S+ merged into main \(its change was already in main\); its worktree and branch are removed$/);
    expect(git(repo, 'rev-parse', 'HEAD')).toBe(tip);
    expect(git(repo, 'branch', '--list', 'autoteam/*')).toBe('');
  });
});

describe('where a pipeline works without a repository', () => {
  it('--no-worktree with --repo or --remote is refused before anything is written', async () => {
    const dir = tempBoard('autoteam-contradict-');
    roots.push(dir);
    for (const command of [['run', '--auto'], ['post']]) {
      for (const [flag, value] of [['--repo', dir], ['--remote', '/nowhere/bare.git']] as const) {
        const run = await runCli([...command, flag, value, '--no-worktree', '--dir', dir, WORDCOUNT_REQUIREMENT], { cwd: dir });
        expect(run.code, describeRun(run)).toBe(2);
        expect(run.stderr.trim()).toBe(`autoteam: ${flag} and --no-worktree contradict each other: give one`);
      }
    }
    expect(fs.readdirSync(dir)).toEqual([]);
    // The config's remote is not refused but said to be unused.
    fs.writeFileSync(path.join(dir, 'autoteam.config.json'), JSON.stringify({ repository: { remote: '/nowhere/bare.git' } }));
    const posted = await runCli(['post', '--no-worktree', '--dir', dir, WORDCOUNT_REQUIREMENT], { cwd: dir });
    expect(posted.code, describeRun(posted)).toBe(0);
    expect(posted.stderr).toContain('autoteam: --no-worktree: repository.remote of autoteam.config.json is not used; pipelines work in workspace/<n>');
    expect(readTasks(dir)[0]!.artifacts.git).toBeUndefined();
  });

  it('a board outside git, --no-worktree, and a repository with no commit all use workspace/<n>', async () => {
    const plain = tempBoard('autoteam-plain-');
    const fresh = tempBoard('autoteam-nocommit-');
    roots.push(plain, fresh);
    git(fresh, 'init', '-q', '-b', 'main');
    const repo = makeRepo();
    const cases: Array<[string, string[], RegExp | null]> = [
      [plain, [], null],
      [repo, ['--no-worktree'], null],
      [fresh, [], /has no commit yet: pipelines work in workspace\//],
    ];
    for (const [dir, flags, notice] of cases) {
      const session = new LeadSession({ rootDir: dir, model: { kind: 'offline', reason: 'test' }, ...(flags.length ? { repo: false as const } : {}) });
      const notices: string[] = [];
      session.on('event', (event) => {
        if (event.type === 'notice') notices.push(event.text);
      });
      try {
        await session.start([]);
        const task = await session.post('Write a Python script that organizes my Downloads folder by file type.');
        expect(task.artifacts.git).toBeUndefined();
        expect(session.snapshot().pipelines.find((pipeline) => pipeline.id === task.pipeline)!.workspace).toBe(path.join(dir, 'workspace', '1'));
        if (notice) expect(notices.join('\n')).toMatch(notice);
        else expect(notices.join('\n')).not.toMatch(/repository/);
      } finally {
        await session.close(1_000);
      }
    }
    expect(git(repo, 'branch', '--list', 'autoteam/*')).toBe('');
    // Not worked as a repository, but the board in it is kept out of `git status` all the same.
    expect(git(repo, 'status', '--porcelain')).toBe('');
  });

  it('--repo naming a folder that is not a repository is a usage error naming it, and leaves no board behind', async () => {
    const dir = tempBoard('autoteam-notrepo-');
    roots.push(dir);
    const missing = path.join(dir, 'no-such-repo');
    for (const [args, repo, reason] of [
      [['run', '--auto', '--repo', dir, '--dir', dir, DOWNLOADS_REQUIREMENT], dir, `${dir} is not inside a git repository`],
      [['--repo', missing, '--dir', dir], missing, `${missing} does not exist`],
      [['post', '--repo', missing, '--dir', dir, DOWNLOADS_REQUIREMENT], missing, `${missing} does not exist`],
      [['mcp', 'serve', '--repo', missing, '--dir', dir], missing, `${missing} does not exist`],
    ] as const) {
      const result = await runCli([...args], { cwd: dir });
      expect(result.code, describeRun(result)).toBe(2);
      expect(result.stderr.trim()).toBe(`autoteam: --repo ${repo}: ${reason}`);
      expect(fs.readdirSync(dir)).toEqual([]);
    }
  });
});

describe('merging leaves the person in charge', () => {
  /** main with a.txt, and branch `feature` adding b.txt after main moved on (so no fast-forward). */
  function diverged(): string {
    const repo = makeRepo('autoteam-merge-');
    git(repo, 'checkout', '-q', '-b', 'feature');
    fs.writeFileSync(path.join(repo, 'b.txt'), 'feature\n');
    git(repo, 'add', 'b.txt');
    git(repo, 'commit', '-q', '-m', 'feature');
    git(repo, 'checkout', '-q', 'main');
    fs.writeFileSync(path.join(repo, 'a.txt'), 'main\n');
    git(repo, 'add', 'a.txt');
    git(repo, 'commit', '-q', '-m', 'main moves on');
    return repo;
  }

  /** Branch `side` from before main's a.txt, adding an a.txt of its own: a merge or rebase of it with main conflicts. */
  function sideBranch(repo: string): void {
    git(repo, 'checkout', '-q', '-b', 'side', 'HEAD~1');
    fs.writeFileSync(path.join(repo, 'a.txt'), 'side\n');
    git(repo, 'add', 'a.txt');
    git(repo, 'commit', '-q', '-m', 'side');
  }

  it("refuses while the person's own merge is under way, and keeps what they resolved", async () => {
    const { mergeBranch } = await import('../../src/core/git/worktree.js');
    const repo = diverged();
    sideBranch(repo);
    git(repo, 'checkout', '-q', 'main');
    spawnSync('git', ['merge', 'side'], { cwd: repo });
    fs.writeFileSync(path.join(repo, 'a.txt'), 'RESOLVED BY HAND\n');
    git(repo, 'add', 'a.txt');
    await expect(mergeBranch(repo, 'feature', 'Merge feature')).rejects.toThrow(/a merge is in progress .*; finish or abort it first \(nothing was changed\)/);
    expect(fs.existsSync(path.join(repo, '.git', 'MERGE_HEAD'))).toBe(true);
    expect(fs.readFileSync(path.join(repo, 'a.txt'), 'utf8')).toBe('RESOLVED BY HAND\n');
  });

  it("waits while the person's own rebase is under way (HEAD detached), naming the rebase: /merge and the queue's move of a branch checked out nowhere", async () => {
    const { mergeBranch } = await import('../../src/core/git/worktree.js');
    const { LocalMergeTarget } = await import('../../src/core/git/merge-target.js');
    const repo = diverged();
    sideBranch(repo);
    // Stops on a.txt, which main added too: a rebase under way, HEAD detached, main checked out nowhere.
    expect(spawnSync('git', ['rebase', 'main'], { cwd: repo }).status).not.toBe(0);
    const main = git(repo, 'rev-parse', 'main');
    await expect(mergeBranch(repo, 'feature', 'Merge feature')).rejects.toThrow(/^cannot merge feature: a rebase is in progress in .*; finish or abort it first \(nothing was changed\)$/);
    const moved = await new LocalMergeTarget(repo, 'main').advance(main, git(repo, 'rev-parse', 'feature'));
    expect(moved).toEqual({ ok: false, waiting: `a rebase is under way in ${repo}; finish or abort it, then merge again` });
    expect(git(repo, 'rev-parse', 'main')).toBe(main);
  });

  it('names the files in the way when git refuses, and changes nothing', async () => {
    const { mergeBranch } = await import('../../src/core/git/worktree.js');
    const repo = diverged();
    fs.writeFileSync(path.join(repo, 'b.txt'), 'mine, untracked\n');
    const head = git(repo, 'rev-parse', 'HEAD');
    const error = await mergeBranch(repo, 'feature', 'Merge feature').catch((e: Error) => e);
    expect(String(error)).toBe(`AutoteamError: cannot merge feature into main: it would write over b.txt in ${repo}, yours and not tracked by git there (an untracked or ignored file, or a folder); nothing was merged: move it aside, then merge again`);
    expect(String(error)).not.toMatch(/error: error:|\n/);
    expect(git(repo, 'rev-parse', 'HEAD')).toBe(head);
    expect(fs.readFileSync(path.join(repo, 'b.txt'), 'utf8')).toBe('mine, untracked\n');
    expect(fs.existsSync(path.join(repo, '.git', 'MERGE_HEAD'))).toBe(false);
  });

  it("a fast-forward over a file of the person's is refused, saying that nothing was merged", async () => {
    const { mergeBranch } = await import('../../src/core/git/worktree.js');
    const repo = diverged();
    // main is behind feature: a merge would fast-forward it.
    git(repo, 'reset', '-q', '--hard', git(repo, 'merge-base', 'main', 'feature'));
    const changed = git(repo, 'diff', '--name-only', 'main', 'feature').split('\n')[0]!;
    fs.writeFileSync(path.join(repo, changed), 'mine, not committed\n');
    const head = git(repo, 'rev-parse', 'HEAD');
    const error = await mergeBranch(repo, 'feature', 'Merge feature').catch((e: Error) => e);
    expect(String(error)).toBe(`AutoteamError: cannot merge feature into main: it would write over ${changed} in ${repo}, yours and not tracked by git there (an untracked or ignored file, or a folder); nothing was merged: move it aside, then merge again`);
    expect(git(repo, 'rev-parse', 'HEAD')).toBe(head);
    expect(fs.readFileSync(path.join(repo, changed), 'utf8')).toBe('mine, not committed\n');
  });

  it('a merge over an uncommitted change to a file the branch changes is refused, naming the file and what to do; nothing was merged', async () => {
    const { mergeBranch } = await import('../../src/core/git/worktree.js');
    const repo = diverged();
    // main is behind a feature that changes a tracked file: the merge would fast-forward it.
    git(repo, 'reset', '-q', '--hard', git(repo, 'merge-base', 'main', 'feature'));
    const tracked = git(repo, 'ls-files').split('\n')[0]!;
    git(repo, 'checkout', '-q', 'feature');
    fs.appendFileSync(path.join(repo, tracked), 'changed on feature\n');
    git(repo, 'commit', '-q', '-am', 'feature changes a tracked file');
    git(repo, 'checkout', '-q', 'main');
    fs.appendFileSync(path.join(repo, tracked), 'mine, not committed\n');
    const mine = fs.readFileSync(path.join(repo, tracked), 'utf8');
    const head = git(repo, 'rev-parse', 'HEAD');
    const error = await mergeBranch(repo, 'feature', 'Merge feature').catch((e: Error) => e);
    const refused = (file: string, at: string) => `AutoteamError: cannot merge feature into main: your uncommitted changes to ${file} in ${at} are in its way; nothing was merged (your branch and files are as they were): commit or stash them, then merge again`;
    expect(String(error)).toBe(refused(tracked, repo));
    expect(git(repo, 'rev-parse', 'HEAD')).toBe(head);
    expect(fs.readFileSync(path.join(repo, tracked), 'utf8')).toBe(mine);
    // A merge commit (main moved on) over a staged change is refused the same way; a change to a file the branch leaves alone is not in the way.
    const apart = diverged();
    fs.writeFileSync(path.join(apart, 'b.txt'), 'mine, staged\n');
    git(apart, 'add', 'b.txt');
    const before = git(apart, 'rev-parse', 'HEAD');
    expect(String(await mergeBranch(apart, 'feature', 'Merge feature').catch((e: Error) => e))).toBe(refused('b.txt', apart));
    expect(git(apart, 'rev-parse', 'HEAD')).toBe(before);
    expect(git(apart, 'show', ':b.txt')).toBe('mine, staged');
    git(apart, 'rm', '-q', '--cached', 'b.txt');
    fs.rmSync(path.join(apart, 'b.txt'));
    // A merge commit is made in the index: a staged change to a file the branch leaves alone is in its way too.
    fs.appendFileSync(path.join(apart, 'a.txt'), 'mine, staged\n');
    git(apart, 'add', 'a.txt');
    expect(String(await mergeBranch(apart, 'feature', 'Merge feature').catch((e: Error) => e))).toBe(refused('a.txt', apart));
    git(apart, 'reset', '-q');
    // Not staged, a change to a file the branch leaves alone is not in the way; and a file named HEAD in the repository confuses nothing.
    fs.writeFileSync(path.join(apart, 'HEAD'), 'a file named HEAD\n');
    expect((await mergeBranch(apart, 'feature', 'Merge feature')).how).toBe('merge commit');
    expect(fs.readFileSync(path.join(apart, 'a.txt'), 'utf8')).toBe('main\nmine, staged\n');
    // A file the branch deletes, deleted here too and not committed: git merges over it, and so does this.
    const both = diverged();
    git(both, 'reset', '-q', '--hard', git(both, 'merge-base', 'main', 'feature'));
    const doomed = git(both, 'ls-files').split('\n')[0]!;
    git(both, 'checkout', '-q', 'feature');
    git(both, 'rm', '-q', doomed);
    git(both, 'commit', '-q', '-m', 'feature deletes it');
    git(both, 'checkout', '-q', 'main');
    fs.rmSync(path.join(both, doomed));
    expect((await mergeBranch(both, 'feature', 'Merge feature')).how).toBe('fast-forward');
  });

  it('a branch the person already merged by hand is recognised, not refused', async () => {
    const { mergeBranch } = await import('../../src/core/git/worktree.js');
    const repo = diverged();
    git(repo, 'merge', '-q', '--no-edit', 'feature');
    const head = git(repo, 'rev-parse', 'HEAD');
    expect(await mergeBranch(repo, 'feature', 'Merge feature')).toEqual({ into: 'main', how: 'already merged', commit: head });
  });

  it('--repo that does not exist, or is a file, says so; a repository without a commit still keeps the board out of git status', async () => {
    const dir = tempBoard('autoteam-badrepo-');
    roots.push(dir);
    const missing = await runCli(['run', '--auto', '--repo', path.join(dir, 'nope'), '--dir', dir, DOWNLOADS_REQUIREMENT], { cwd: dir });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/--repo .*nope: .*nope does not exist/);
    fs.writeFileSync(path.join(dir, 'file.txt'), 'x');
    const file = await runCli(['run', '--auto', '--repo', path.join(dir, 'file.txt'), '--dir', dir, DOWNLOADS_REQUIREMENT], { cwd: dir });
    expect(file.stderr).toMatch(/file\.txt is not a directory/);

    const fresh = tempBoard('autoteam-nocommit2-');
    roots.push(fresh);
    git(fresh, 'init', '-q', '-b', 'main');
    const session = new LeadSession({ rootDir: fresh, model: { kind: 'offline', reason: 'test' } });
    try {
      await session.start([]);
      await session.post(DOWNLOADS_REQUIREMENT);
    } finally {
      await session.close(1_000);
    }
    expect(git(fresh, 'status', '--porcelain')).toBe('');
  });
});

describe('autoteam in its own checkout', () => {
  const own = path.resolve(import.meta.dirname, '..', '..');
  it.runIf(fs.existsSync(path.join(own, '.git')))('does not make branches of the tool itself unless --repo names it', async () => {
    const { openRepository } = await import('../../src/core/lead/repository.js');
    const notices: string[] = [];
    const before = git(own, 'branch', '--list', 'autoteam/*');
    expect(await openRepository(undefined, own, (text) => notices.push(text))).toBeNull();
    expect(notices).toHaveLength(1);
    expect(notices[0]).toMatch(/^\/.* is autoteam's own repository: pipelines work in workspace\/ \(--repo \/.* uses it anyway\)$/);
    expect(git(own, 'branch', '--list', 'autoteam/*')).toBe(before);
  });
});

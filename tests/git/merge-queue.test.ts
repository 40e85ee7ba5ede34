/**
 * The merge queue with real git, a real file board, the real Pipeline and real sandboxed checks; the
 * pipelines are made by signalling their stages directly (no model): an engineer's files written into
 * the worktree, a review that approves with a recorded check.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONFIG_FILE, loadProjectConfig } from '../../src/core/config/project-config.js';
import { MergeQueue, MergeRunner, queuedPipelines, recheckLimits } from '../../src/core/lead/merge-queue.js';
import { diffPipeline, discardPipeline, mergePipeline } from '../../src/core/lead/branches.js';
import { pipelineStatus } from '../../src/core/stages/pipeline-status.js';
import { cleanEnv, cliEntry, describeRun, runCli } from '../helpers/pipeline-cli.js';
import { holdLock } from '../helpers/held-lock.js';
import { commitFile, git, roots, setup } from '../helpers/merge-queue-setup.js';

const CALC_CHECK = ['import os, sys', 'sys.path.insert(0, os.getcwd())', 'import calc', 'assert calc.f() == 2, f"f() is {calc.f()}"', ''].join('\n');
const calc = (expression: string) => `"""Add one to the helper's value."""\nfrom helper import VALUE\n\n\ndef f():\n    """Return the value the check wants."""\n    return ${expression}\n`;

/** `autoteam <args>` in `repo`, sent Ctrl+C once it says it waits for another merger: its exit status and output. */
async function ctrlCWhileWaiting(repo: string, args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [cliEntry, ...args], { cwd: repo, env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  let waiting = () => {};
  const saidWaiting = new Promise<void>((resolve) => (waiting = resolve));
  child.stdout.setEncoding('utf8').on('data', (text: string) => {
    stdout += text;
    if (stdout.includes('waiting: another merger')) waiting();
  });
  child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  await saidWaiting;
  child.kill('SIGINT');
  return { code: await exited, stdout, stderr };
}

describe('the merge queue', () => {
  it('sends back a pipeline whose check passes on its branch and fails after the rebase, leaving the base as it was; its revision then merges', { timeout: 120_000 }, async () => {
    const { repo, board, queue, post, work, steps } = await setup();
    const pipeline = await post('calc.py', calc('VALUE + 1'), CALC_CHECK);
    // The person changes what the check depends on, with no textual conflict.
    const tip = commitFile(repo, 'helper.py', 'VALUE = 5\n', 'a new value');

    const approved = queuedPipelines(board.tasks.list())[0]!.git.commit!;
    const [line] = await queue().drain();
    expect(line).toMatch(new RegExp(`^pipeline #${pipeline}: not merged — check CHK1 fails after a rebase onto main; sent back to implementation as revision 1 \\(#\\d+\\); the approved commit was ${approved.slice(0, 12)}$`));
    expect(git(repo, 'rev-parse', 'main')).toBe(tip);
    expect(git(repo, 'status', '--porcelain')).toBe('');
    expect(await steps(pipeline)).toEqual(['queued', 'rebased', 'checked', 'sent_back']);

    const tasks = board.tasks.list().filter((task) => task.pipeline === pipeline);
    expect(pipelineStatus(tasks)).toBe('active');
    const revision = tasks.at(-1)!;
    expect(revision).toMatchObject({ stage: 'implementation', revision: 1, status: 'pending' });
    // Posted by the queue that sent it back, not by the reviewer who approved it.
    const posted = (await board.log.read({ pipeline, types: ['task_posted'] })).find((event) => event.task === revision.id);
    expect(posted).toMatchObject({ agent: 'lead', by: 'lead' });
    expect(revision.artifacts.issues).toHaveLength(1);
    expect(revision.artifacts.issues![0]!.severity).toBe('blocker');
    expect(revision.artifacts.issues![0]!.text).toMatch(/on main's tip \([0-9a-f]{12}\) check CHK1 fails, though it passed on the branch as reviewed: .*f\(\) is 6/s);
    // The worktree: its branch on the base's tip, the change laid over it uncommitted, for the engineer to fix.
    const info = revision.artifacts.git!;
    expect(info.base).toBe(tip);
    expect(info.commit).toBeUndefined();
    expect(git(info.worktree, 'rev-parse', 'HEAD')).toBe(tip);
    expect(fs.readFileSync(path.join(info.worktree, 'calc.py'), 'utf8')).toBe(calc('VALUE + 1'));
    expect(queuedPipelines(board.tasks.list())).toEqual([]);

    await work(revision, 'calc.py', calc('VALUE - 3'), CALC_CHECK);
    const [merged] = await queue().drain();
    expect(merged).toMatch(new RegExp(`^pipeline #${pipeline}: autoteam/${pipeline}-add-calc-py merged into main \\(fast-forward to [0-9a-f]{12}\\); its worktree and branch are removed$`));
    // main is checked out and clean: fast-forwarded in the person's tree, which now has the file.
    expect(fs.readFileSync(path.join(repo, 'calc.py'), 'utf8')).toBe(calc('VALUE - 3'));
    expect(git(repo, 'rev-list', '--count', `${tip}..main`)).toBe('1');
    expect(git(repo, 'status', '--porcelain')).toBe('');
    expect(fs.existsSync(info.worktree)).toBe(false);
    expect(git(repo, 'branch', '--list', 'autoteam/*')).toBe('');
    expect(board.tasks.list().find((task) => task.artifacts.outcome)?.artifacts.outcome).toMatchObject({ action: 'merged', into: 'main', by: 'lead' });
  });

  it('merges two approved pipelines in approval order, each step saying when it was approved and its place in the queue', { timeout: 60_000 }, async () => {
    const { repo, board, queue, post } = await setup();
    const check = (file: string) => `import os\nassert os.path.exists(${JSON.stringify(file)})\n`;
    const first = await post('one.py', '"""One."""\n', check('one.py'));
    const second = await post('two.py', '"""Two."""\n', check('two.py'));
    const lines = await queue().drain();
    expect(lines).toEqual([expect.stringMatching(new RegExp(`^pipeline #${first}: .* merged into main`)), expect.stringMatching(new RegExp(`^pipeline #${second}: .* merged into main`))]);
    await board.sink.flush();
    const queued = (await board.log.read({ types: ['merge_step'] })).filter((event) => event.type === 'merge_step' && event.step === 'queued');
    expect(queued.map((event) => [event.pipeline, event.type === 'merge_step' ? event.detail : ''])).toEqual([
      [first, expect.stringMatching(/^approved \d+ s ago; 1 of 2 in the queue$/)],
      [second, expect.stringMatching(/^approved \d+ s ago; 2 of 2 in the queue$/)],
    ]);
    expect(git(repo, 'ls-files').split('\n')).toEqual(expect.arrayContaining(['one.py', 'two.py']));
  });

  it('a pipeline whose change another pipeline merged first: merged with no commit of its own, and its outcome says so', { timeout: 60_000 }, async () => {
    const { repo, board, queue, post } = await setup();
    const check = `import os\nassert os.path.exists("same.py")\n`;
    const first = await post('same.py', '"""Same."""\n', check);
    const second = await post('same.py', '"""Same."""\n', check);
    const lines = await queue().drain();
    expect(lines[0]).toMatch(new RegExp(`^pipeline #${first}: .* merged into main \\(fast-forward to [0-9a-f]{12}\\)`));
    expect(lines[1]).toMatch(new RegExp(`^pipeline #${second}: .* merged into main \\(its change was already in main\\)`));
    const outcomes = board.tasks.list().filter((task) => task.artifacts.outcome).map((task) => [task.pipeline, task.artifacts.outcome]);
    const tip = git(repo, 'rev-parse', 'main');
    expect(outcomes).toEqual([
      [first, { action: 'merged', into: 'main', commit: tip, by: 'lead' }],
      [second, { action: 'merged', into: 'main', commit: tip, noChange: true, by: 'lead' }],
    ]);
  });

  it('merges a pipeline approved with nothing to commit as it is, with no re-check, when the base moved since', { timeout: 60_000 }, async () => {
    const { repo, board, queue, post, steps } = await setup();
    // The engineer's file is the base's, word for word: the approval commits nothing.
    const pipeline = await post('helper.py', 'VALUE = 1\n', 'from helper import VALUE\nassert VALUE == 1\n');
    const queued = queuedPipelines(board.tasks.list())[0]!.git;
    expect(queued.commit).toBe(queued.base);
    // Someone changes that file on main: the recorded check would fail on the new tip.
    const tip = commitFile(repo, 'helper.py', 'VALUE = 5\n', 'a new value');
    const [line] = await queue().drain();
    expect(line).toBe(`pipeline #${pipeline}: ${queued.branch} merged into main (its change was already in main); its worktree and branch are removed`);
    expect(await steps(pipeline)).toEqual(['queued', 'merged']);
    expect(git(repo, 'rev-parse', 'main')).toBe(tip);
    expect(fs.readFileSync(path.join(repo, 'helper.py'), 'utf8')).toBe('VALUE = 5\n');
    expect(fs.existsSync(queued.worktree)).toBe(false);
    expect(board.tasks.list().filter((task) => task.pipeline === pipeline).at(-1)!.artifacts.outcome).toMatchObject({ action: 'merged', into: 'main', noChange: true });
  });

  it('makes a worktree removed by hand again (git still registers it), and merges on the first run', { timeout: 60_000 }, async () => {
    const { repo, board, queue, post } = await setup();
    const pipeline = await post('one.py', '"""One."""\n', 'import os\nassert os.path.exists("one.py")\n');
    fs.rmSync(queuedPipelines(board.tasks.list())[0]!.git.worktree, { recursive: true, force: true });
    const [line] = await queue().drain();
    expect(line).toMatch(new RegExp(`^pipeline #${pipeline}: .* merged into main \\(fast-forward to [0-9a-f]{12}\\)`));
    expect(fs.readFileSync(path.join(repo, 'one.py'), 'utf8')).toBe('"""One."""\n');
  });

  it('waits, saying why in its line and as an event, when the branch it was posted from is deleted', { timeout: 60_000 }, async () => {
    const { repo, board, queue, post, steps } = await setup();
    git(repo, 'checkout', '-q', '-b', 'dev');
    const pipeline = await post('one.py', '"""One."""\n', 'import os\nassert os.path.exists("one.py")\n');
    git(repo, 'checkout', '-q', 'main');
    git(repo, 'branch', '-q', '-D', 'dev');
    expect(await queue().drain()).toEqual([
      `pipeline #${pipeline}: waits — its base branch dev no longer exists in ${repo}; create it again (git branch dev ${queuedPipelines(board.tasks.list())[0]!.git.base.slice(0, 12)}, where the pipeline started) and merge again`,
    ]);
    expect(queuedPipelines(board.tasks.list()).map((queued) => queued.pipeline)).toEqual([pipeline]);
    // autoMerge's drain has no line to print: the event is what says it waits.
    expect(await steps(pipeline)).toEqual(['waiting']);
  });

  it('autoteam merge --queue: a pipeline sent back names its approved commit, and who works the revision', { timeout: 60_000 }, async () => {
    const { repo, board, post } = await setup();
    const pipeline = await post('calc.py', calc('VALUE + 1'), CALC_CHECK);
    const approved = queuedPipelines(board.tasks.list())[0]!.git.commit;
    commitFile(repo, 'helper.py', 'VALUE = 5\n', 'a new value');
    await board.sink.flush();
    // `--remote` is read (a remote that is not there is refused before anything), and goes with --queue only.
    const missing = await runCli(['merge', '--queue', '--remote', path.join(repo, 'no-such.git')], { cwd: repo });
    expect(missing.code, describeRun(missing)).toBe(2);
    expect(missing.stderr).toContain(path.join(repo, 'no-such.git'));
    // Refused for the combination, before (and whether or not) the remote can be reached.
    const single = await runCli(['merge', String(pipeline), '--remote', path.join(repo, 'no-such.git')], { cwd: repo });
    expect(single.code, describeRun(single)).toBe(2);
    expect(single.stderr.trim()).toBe('autoteam: --remote goes with --queue: a pipeline on a remote is merged by the queue, which pushes its base there');
    expect(queuedPipelines(board.tasks.list()).map((queued) => queued.pipeline)).toEqual([pipeline]);
    const all = await runCli(['merge', 'all'], { cwd: repo });
    expect(all.code, describeRun(all)).toBe(2);
    expect(all.stderr.trim()).toBe('autoteam: merge all is autoteam merge --queue: every approved pipeline, in approval order');
    const cli = await runCli(['merge', '--queue'], { cwd: repo });
    expect(cli.code, describeRun(cli)).toBe(1);
    expect(cli.stdout.trim().split('\n')).toEqual([
      expect.stringMatching(new RegExp(`^pipeline #${pipeline}: not merged — check CHK1 fails after a rebase onto main; sent back to implementation as revision 1 \\(#\\d+\\); the approved commit was ${approved.slice(0, 12)}$`)),
      'no lead runs on this board: the tasks wait for one (autoteam; autoteam --auto < /dev/null works them and ends) or for workers (autoteam worker --role engineer, and one with --role reviewer); once approved again, autoteam merge --queue merges it',
    ]);
  });

  it("waits while the base is checked out with uncommitted changes, touching none of them; merges once they are put away", { timeout: 60_000 }, async () => {
    const { repo, board, queue, post, steps } = await setup();
    const pipeline = await post('calc.py', calc('VALUE + 1'), CALC_CHECK);
    const head = git(repo, 'rev-parse', 'main');
    fs.writeFileSync(path.join(repo, 'helper.py'), 'VALUE = 1  # mine, not committed\n');
    fs.writeFileSync(path.join(repo, 'notes.txt'), 'untracked notes\n');

    const [line] = await queue().drain();
    expect(line).toBe(`pipeline #${pipeline}: waits — main is checked out in ${repo} with uncommitted changes (helper.py); commit or stash them, then merge again`);
    expect(git(repo, 'rev-parse', 'main')).toBe(head);
    expect(fs.readFileSync(path.join(repo, 'helper.py'), 'utf8')).toBe('VALUE = 1  # mine, not committed\n');
    expect(fs.readFileSync(path.join(repo, 'notes.txt'), 'utf8')).toBe('untracked notes\n');
    expect(fs.existsSync(path.join(repo, 'calc.py'))).toBe(false);
    expect(queuedPipelines(board.tasks.list()).map((entry) => entry.pipeline)).toEqual([pipeline]);
    expect(await steps(pipeline)).toEqual(['queued', 'rebased', 'waiting']);
    // A script is told: nothing merged, exit 1.
    await board.sink.flush();
    const cli = await runCli(['merge', '--queue'], { cwd: repo });
    expect(cli.code, describeRun(cli)).toBe(1);
    expect(cli.stdout.trim()).toBe(line);

    git(repo, 'stash', '-q');
    expect((await queue().drain())[0]).toMatch(/merged into main \(fast-forward/);
    git(repo, 'stash', 'pop', '-q');
    expect(fs.readFileSync(path.join(repo, 'helper.py'), 'utf8')).toBe('VALUE = 1  # mine, not committed\n');
    expect(fs.readFileSync(path.join(repo, 'calc.py'), 'utf8')).toBe(calc('VALUE + 1'));
    expect(queuedPipelines(board.tasks.list())).toEqual([]);
  });

  it('waits while a file of the person that git ignores (or does not track) stands where the merge would write, touching none of it; `merge N` refuses the same', { timeout: 60_000 }, async () => {
    const { repo, board, queue, post, steps } = await setup();
    const pipeline = await post('calc.py', calc('VALUE + 1'), CALC_CHECK);
    const head = git(repo, 'rev-parse', 'main');
    // Ignored only here (not by a committed .gitignore): git would write over it without a word.
    fs.appendFileSync(path.join(repo, '.git', 'info', 'exclude'), 'calc.py\n');
    fs.writeFileSync(path.join(repo, 'calc.py'), 'precious, and mine\n');

    const [line] = await queue().drain();
    expect(line).toBe(`pipeline #${pipeline}: waits — main is checked out in ${repo}, where the merge would write over calc.py: yours and not tracked by git there (an untracked or ignored file, or a folder); move it aside, then merge again`);
    expect(git(repo, 'rev-parse', 'main')).toBe(head);
    expect(fs.readFileSync(path.join(repo, 'calc.py'), 'utf8')).toBe('precious, and mine\n');
    expect(await steps(pipeline)).toEqual(['queued', 'rebased', 'waiting']);
    // A folder of its own where the change needs a file is in the way too.
    fs.rmSync(path.join(repo, 'calc.py'));
    fs.mkdirSync(path.join(repo, 'calc.py'));
    expect((await queue().drain())[0]).toMatch(/waits — .* would write over calc\.py: yours and not tracked by git there \(an untracked or ignored file, or a folder\)/);

    // The single merge of the branch by hand says the same, and merges nothing.
    const { mergeBranch } = await import('../../src/core/git/worktree.js');
    const branch = queuedPipelines(board.tasks.list())[0]!.git.branch;
    await expect(mergeBranch(repo, branch, 'Merge it')).rejects.toThrow(`cannot merge ${branch} into main: it would write over calc.py in ${repo}, yours and not tracked by git there (an untracked or ignored file, or a folder); nothing was merged: move it aside, then merge again`);
    expect(git(repo, 'rev-parse', 'main')).toBe(head);

    fs.rmdirSync(path.join(repo, 'calc.py'));
    expect((await queue().drain())[0]).toMatch(/merged into main \(fast-forward/);
    expect(fs.readFileSync(path.join(repo, 'calc.py'), 'utf8')).toBe(calc('VALUE + 1'));
  });

  it('two `autoteam merge --queue` at once merge each pipeline once; a base checked out nowhere moves by its ref alone', { timeout: 120_000 }, async () => {
    const { repo, board, post } = await setup();
    const ok = 'print("ok")\n';
    const first = await post('a.py', '"""A."""\nprint("a")\n', ok);
    const second = await post('b.py', '"""B."""\nprint("b")\n', ok);
    const base = git(repo, 'rev-parse', 'main');
    // The person works on another branch: main is checked out nowhere.
    git(repo, 'checkout', '-q', '-b', 'side');
    fs.writeFileSync(path.join(repo, 'mine.txt'), 'uncommitted, on side\n');
    await board.sink.flush();

    const runs = await Promise.all([runCli(['merge', '--queue'], { cwd: repo }), runCli(['merge', '--queue'], { cwd: repo })]);
    for (const run of runs) expect(run.code, describeRun(run)).toBe(0);
    const lines = runs.flatMap((run) => run.stdout.trim().split('\n'));
    for (const id of [first, second]) expect(lines.filter((line) => line.startsWith(`pipeline #${id}: `) && / merged into main /.test(line)), lines.join('\n')).toHaveLength(1);
    const events = await board.log.read({ types: ['merge_step'] });
    for (const id of [first, second]) expect(events.filter((event) => event.pipeline === id && event.type === 'merge_step' && event.step === 'merged')).toHaveLength(1);

    expect(git(repo, 'rev-list', '--count', `${base}..main`)).toBe('2');
    expect(git(repo, 'ls-tree', '--name-only', 'main').split('\n').sort()).toEqual(['a.py', 'b.py', 'helper.py']);
    expect(git(repo, 'symbolic-ref', '--short', 'HEAD')).toBe('side');
    expect(git(repo, 'rev-parse', 'side')).toBe(base);
    expect(fs.readFileSync(path.join(repo, 'mine.txt'), 'utf8')).toBe('uncommitted, on side\n');
    expect(fs.existsSync(path.join(repo, 'a.py'))).toBe(false);
  });

  it('stops before its next pipeline when told to, each line heard as its pipeline is done; what is left stays queued', { timeout: 60_000 }, async () => {
    const { board, pipelines, post } = await setup();
    const ok = 'print("ok")\n';
    const first = await post('a.py', '"""A."""\n', ok);
    const second = await post('b.py', '"""B."""\n', ok);
    const stop = new AbortController();
    const heard: Array<{ line: string; queued: number[] }> = [];
    const onLine = (line: string) => {
      heard.push({ line, queued: queuedPipelines(board.tasks.list()).map((entry) => entry.pipeline) });
      stop.abort();
    };
    const queue = new MergeQueue({ board, pipelines, by: 'lead', limits: recheckLimits(), signal: stop.signal, onLine });
    const lines = await queue.drain();
    expect(lines).toEqual([expect.stringMatching(new RegExp(`^pipeline #${first}: .* merged into main`)), `stopped: pipeline #${second} stays in the queue, unmerged (the next drain merges it)`]);
    // Each line as it came: the first while the second still waited its turn.
    expect(heard).toEqual([{ line: lines[0], queued: [second] }, { line: lines[1], queued: [second] }]);
    expect(queue.handled.map((entry) => entry.pipeline)).toEqual([first]);
    expect(queuedPipelines(board.tasks.list()).map((entry) => entry.pipeline)).toEqual([second]);
    // Said as a step as well, where the REPL and run show the queue.
    await board.sink.flush();
    const steps = (await board.log.read({ pipeline: second, types: ['merge_step'] })).map((event) => (event.type === 'merge_step' ? [event.step, event.detail] : []));
    expect(steps).toEqual([['waiting', 'the queue was stopped before its turn; it stays in the queue']]);
  });

  it('says it waits while another merger holds the queue, before the wait, and merges once that one has ended', { timeout: 60_000 }, async () => {
    const { board, pipelines, post } = await setup();
    const only = await post('a.py', '"""A."""\n', 'print("ok")\n');
    // Another merger: the board's queue lock, held until the drain below has said that it waits.
    const { release, done: other } = await holdLock(board.tasks, 'merge-queue');
    const heard: string[] = [];
    const queue = new MergeQueue({
      board,
      pipelines,
      by: 'lead',
      limits: recheckLimits(),
      onLine: (line) => {
        heard.push(line);
        if (line.startsWith('waiting: ')) release();
      },
    });
    const lines = await queue.drain();
    await other;
    expect(lines).toEqual(['waiting: another merger is draining the merge queue of this board', expect.stringMatching(new RegExp(`^pipeline #${only}: .* merged into main`))]);
    expect(heard).toEqual(lines);
    expect(queue.handled.map((entry) => entry.pipeline)).toEqual([only]);
  });

  it('a merge or discard by hand says it waits while another merger holds the queue, as the wait begins, then goes on', { timeout: 60_000 }, async () => {
    const { repo, board, post } = await setup();
    const first = await post('a.py', '"""A."""\n', 'print("ok")\n');
    const second = await post('b.py', '"""B."""\n', 'print("ok")\n');
    for (const [act, id] of [[mergePipeline, first], [discardPipeline, second]] as const) {
      const { release, done: other } = await holdLock(board.tasks, 'merge-queue');
      const heard: string[] = [];
      const line = await act(board.tasks, id, 'lead', {
        onLine: (said) => {
          heard.push(said);
          release();
        },
      });
      await other;
      expect(heard).toEqual(['waiting: another merger is draining the merge queue of this board']);
      expect(line).toMatch(new RegExp(`^pipeline #${id}`));
    }
    expect(git(repo, 'show', 'main:a.py')).toContain('A.');
  });

  it('autoteam merge --queue stopped by Ctrl+C mid re-check: says so, names the pipeline it left queued, exits 130; a merge made before it stands', { timeout: 60_000 }, async () => {
    const { repo, board, post } = await setup();
    const first = await post('a.py', '"""A."""\n', 'print("ok")\n');
    // Its check takes a while: the base moves under it (the first merges), so the queue runs it again.
    const second = await post('b.py', '"""B."""\n', 'import time\ntime.sleep(30)\n');
    const base = git(repo, 'rev-parse', 'main');
    await board.sink.flush();
    const child = spawn(process.execPath, [cliEntry, 'merge', '--queue'], { cwd: repo, env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    // Interrupted once the second pipeline's re-check is under way: rebased, not yet checked.
    const following = new AbortController();
    await new Promise<void>((resolve, reject) => {
      board.log
        .subscribe({ pipeline: second, types: ['merge_step'] }, (event) => {
          if (event.type === 'merge_step' && event.step === 'rebased') resolve();
        }, following.signal)
        .catch(reject);
    });
    following.abort();
    child.kill('SIGINT');
    expect(await exited, `${stdout}\n${stderr}`).toBe(130);
    expect(stderr).toContain('stopping the merge queue at a safe point: what it has not merged stays queued');
    expect(stdout.trim().split('\n')).toEqual([
      expect.stringMatching(new RegExp(`^pipeline #${first}: .* merged into main`)),
      `pipeline #${second}: not merged — stopped while its checks ran again (it stays in the queue)`,
    ]);
    await board.tasks.refresh();
    expect(queuedPipelines(board.tasks.list()).map((entry) => entry.pipeline)).toEqual([second]);
    expect(git(repo, 'rev-list', '--count', `${base}..main`)).toBe('1');
  });

  it('autoteam merge --queue, merge <n> and discard <n> stopped by Ctrl+C while they wait for another merger: their line, exit 130, nothing taken from the queue', { timeout: 60_000 }, async () => {
    const { repo, board, post } = await setup();
    const only = await post('a.py', '"""A."""\n', 'print("ok")\n');
    const { release, done: other } = await holdLock(board.tasks, 'merge-queue');
    try {
      for (const args of [['merge', '--queue'], ['merge', String(only)], ['discard', String(only)]]) {
        const { code, stdout, stderr } = await ctrlCWhileWaiting(repo, args);
        // Ends while the other merger still holds the queue: the wait itself was stopped.
        expect(code, `${args.join(' ')}\n${stdout}\n${stderr}`).toBe(130);
        expect(stdout.trim().split('\n')).toEqual(['waiting: another merger is draining the merge queue of this board', 'stopped while waiting for the other merger: nothing was done here']);
      }
      await board.tasks.refresh();
      expect(queuedPipelines(board.tasks.list()).map((entry) => entry.pipeline)).toEqual([only]);
    } finally {
      release();
      await other;
    }
  });

  it('a re-check cut short by a stop leaves the pipeline approved and queued, never sent back for it', { timeout: 60_000 }, async () => {
    const { repo, board, pipelines, post, steps } = await setup();
    // A recorded check that would run for minutes on the rebased tree.
    const pipeline = await post('calc.py', calc('VALUE + 1'), 'import time\ntime.sleep(300)\n');
    commitFile(repo, 'notes.md', 'the base moved on\n', 'moved on');
    const stop = new AbortController();
    const following = new AbortController();
    void board.log.subscribe({}, (event) => {
      if (event.type === 'merge_step' && event.step === 'rebased') stop.abort();
    }, following.signal);
    try {
      const lines = await new MergeQueue({ board, pipelines, by: 'lead', limits: recheckLimits(), signal: stop.signal }).drain();
      expect(lines).toEqual([`pipeline #${pipeline}: not merged — stopped while its checks ran again (it stays in the queue)`]);
    } finally {
      following.abort();
    }
    expect(await steps(pipeline)).toEqual(['queued', 'rebased', 'waiting']);
    expect(pipelineStatus(board.tasks.list().filter((task) => task.pipeline === pipeline))).toBe('approved');
    expect(queuedPipelines(board.tasks.list()).map((entry) => entry.pipeline)).toEqual([pipeline]);
    // Its diff is still the approved change: the branch holds the queue's rebase, whose base moved on (notes.md is the base's, not its).
    const diff = await diffPipeline(board.tasks, pipeline);
    expect(diff.split('\n')[0]).toMatch(/· 1 file: A calc\.py · the branch holds the merge queue's rebase of it onto main \(a drain stopped before it merged\); the next drain merges it$/);
    expect(diff).not.toContain('notes.md');
    // Discarded then, it names the approved commit to bring back, not the queue's rebase of it.
    const approved = board.tasks.list().find((task) => task.pipeline === pipeline && task.artifacts.git?.commit)!.artifacts.git!.commit!;
    const discarded = await discardPipeline(board.tasks, pipeline, 'lead');
    expect(discarded).toContain(`its commit was ${approved} (git branch `);
    expect(discarded).not.toContain('past the approved commit');
  });

  it('reads autoMerge from autoteam.config.json, and names the field when it is not a boolean', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-automerge-'));
    roots.push(dir);
    const config = (content: unknown) => {
      fs.writeFileSync(path.join(dir, CONFIG_FILE), JSON.stringify(content));
      return loadProjectConfig(dir, {});
    };
    expect(config({ autoMerge: true }).autoMerge).toBe(true);
    expect(config({}).autoMerge).toBeUndefined();
    expect(() => config({ autoMerge: 'yes' })).toThrow(/autoteam\.config\.json: autoMerge: /);
  });
});

describe("the lead's merge runner", () => {
  /** A queue whose drains are counted, each held until `release` is called. */
  function counted() {
    const state = { drains: 0, release: () => undefined as void };
    const queue = () => ({ drain: () => new Promise<string[]>((resolve) => {
      state.drains++;
      state.release = () => resolve([]);
    }) }) as unknown as MergeQueue;
    return { state, queue };
  }

  it("a merge by hand beside the runner's own drain says it waits for this session's queue, not another merger; beside another's, another's", { timeout: 60_000 }, async () => {
    const { board, post } = await setup();
    const pipeline = await post('a.py', '"""A."""\n', 'print("ok")\n');
    // The runner's drain holds the board's merge lock, as a real drain does, until let go.
    let held = () => {};
    const holding = new Promise<void>((resolve) => (held = resolve));
    let letGo = () => {};
    const runner = new MergeRunner(() => ({ drain: async () => {
      const lock = await holdLock(board.tasks, 'merge-queue');
      letGo = lock.release;
      held();
      await lock.done;
      return [];
    } }) as unknown as MergeQueue);
    const drained = runner.run();
    await holding;
    const heard: string[] = [];
    const merged = mergePipeline(board.tasks, pipeline, 'lead', runner.byHand({ onLine: (line) => (heard.push(line), letGo()) }));
    expect(await merged).toMatch(new RegExp(`^pipeline #${pipeline}: .* merged into main`));
    await drained;
    expect(heard).toEqual(["waiting: this session's merge queue is draining (autoMerge, or /merge all); this goes on once it has ended"]);
    // Another process's drain: the runner is idle, so the wait is said as another merger's.
    const second = await post('b.py', '"""B."""\n', 'print("ok")\n');
    const other = await holdLock(board.tasks, 'merge-queue');
    const again: string[] = [];
    await discardPipeline(board.tasks, second, 'lead', runner.byHand({ onLine: (line) => (again.push(line), other.release()) }));
    expect(again).toEqual(['waiting: another merger is draining the merge queue of this board']);
  });

  it('close stops the drain under way before its next pipeline, and starts none after it', async () => {
    let seen: AbortSignal | null = null;
    let release = () => undefined as void;
    const runner = new MergeRunner((signal) => {
      seen = signal;
      return { drain: () => new Promise<string[]>((resolve) => (release = () => resolve(['merged one']))) } as unknown as MergeQueue;
    });
    const running = runner.run();
    expect(seen!.aborted).toBe(false);
    const closed = runner.close();
    expect(seen!.aborted).toBe(true);
    release();
    await closed;
    expect(await running).toEqual(['merged one']);
    expect(await runner.run()).toEqual(['the session is closing: nothing was merged (autoteam merge --queue merges what is approved)']);
  });

  it('runs an automatic drain only with autoMerge, once more for an approval mid-drain, and none once closed', async () => {
    const off = counted();
    new MergeRunner(off.queue).auto();
    expect(off.state.drains).toBe(0);

    const on = counted();
    const runner = new MergeRunner(on.queue, { on: true, onError: () => undefined });
    runner.auto();
    runner.auto();
    runner.auto();
    expect(on.state.drains).toBe(1);
    // The approvals that came mid-drain get one more, after it.
    on.state.release();
    await new Promise((resolve) => setImmediate(resolve));
    expect(on.state.drains).toBe(2);
    // Closing waits for the drain under way, and no automatic one starts after (a session's start finishing late).
    const closed = runner.close();
    on.state.release();
    await closed;
    runner.auto();
    expect(on.state.drains).toBe(2);
  });
});

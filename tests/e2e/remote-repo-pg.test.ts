/**
 * A repository across machines: two board folders standing for two machines share only a PostgreSQL
 * board (a real server, started by the test setup) and a bare repository (`repository.remote`). The
 * lead and the reviewer work in folder A; the analyst and the engineer are `autoteam worker`
 * processes in folder B. The branch crosses between the folders through the remote at every step,
 * and the merge queue, drained from B, pushes the approval onto the remote's base.
 * Build first: `npm run build`.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openBoard } from '../../src/core/board/board.js';
import { checkoutRemoteTask } from '../../src/core/git/remote-branch.js';
import { remoteWorktree } from '../../src/core/git/remote-url.js';
import { LeadSession } from '../../src/core/lead/session.js';
import { HANG_MS } from '../helpers/agent-wait.js';
import { cleanEnv, cliEntry, DOWNLOADS_REQUIREMENT, describeRun, runCli, tempBoard } from '../helpers/pipeline-cli.js';
import { freshDatabase, postgresBin, usePostgres } from '../helpers/postgres.js';
import { bareRepository as sharedBareRepository, personGit } from '../helpers/person-git.js';

usePostgres();
const python = spawnSync('python3', ['--version']).status === 0;
const dirs: string[] = [];
const children: ChildProcess[] = [];
afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

function folder(prefix: string): string {
  const dir = tempBoard(prefix);
  dirs.push(dir);
  return dir;
}

const git = personGit;

const bareRepository = () => sharedBareRepository(folder);

describe.runIf(postgresBin && python)('a repository across machines', () => {
  it('a lead in A posts, the analyst and engineer in B and the reviewer in A work the branch through a bare repository to an approval commit of the reviewed tree, which the merge queue drained from B pushes onto main', async () => {
    const { bare, base } = bareRepository();

    const url = await freshDatabase();
    const a = folder('autoteam-machine-a-');
    const b = folder('autoteam-machine-b-');
    const board = await openBoard(url, a);
    // Only the lead is told the remote; B learns it from the board's tasks (its folder has no config).
    const session = new LeadSession({ rootDir: a, board, model: { kind: 'offline', reason: 'test' }, auto: true, settings: { pollMs: 200, repository: { remote: bare } } });
    let output = '';
    const workers = [
      ['a2', 'analyst'],
      ['e2', 'engineer'],
    ].map(([name, role]) => {
      const child = spawn(process.execPath, [cliEntry, 'worker', '--board', url, '--dir', b, '--name', name!, '--role', role!], { cwd: b, env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
      children.push(child);
      child.stdout!.setEncoding('utf8').on('data', (text: string) => (output += text));
      child.stderr!.setEncoding('utf8').on('data', (text: string) => (output += text));
      return child;
    });
    try {
      await session.start([{ name: 'reviewer', role: 'reviewer' }]);
      const task = await session.post(DOWNLOADS_REQUIREMENT);
      const state = await session.waitForPipeline(task.pipeline!, AbortSignal.timeout(HANG_MS));
      expect(state.status, `${state.reason}\n${output}`).toBe('approved');
      const owners = (stage: string) => state.tasks.filter((t) => t.stage === stage).map((t) => t.owner);
      expect(owners('requirements')).toEqual(['a2']);
      expect(owners('implementation')).toEqual(['e2', 'e2']);
      expect(owners('review')).toEqual(['reviewer', 'reviewer']);

      const reviews = state.tasks.filter((t) => t.stage === 'review');
      const implementations = state.tasks.filter((t) => t.stage === 'implementation');
      const approved = reviews.at(-1)!.artifacts.git!;
      const branch = approved.branch;
      expect(branch).toBe('autoteam/1-write-a-python-script-that-organizes-my');
      expect(approved.remote).toBe(bare);
      expect(approved.base).toBe(base);
      // Each submission is a commit the engineer pushed from B; the revision's on top of the one reviewed before.
      const submitted = implementations.map((t) => t.artifacts.git!.head!);
      expect(reviews[0]!.artifacts.git!.head).toBe(submitted[0]);
      expect(git(bare, 'rev-parse', `${submitted[0]}^`)).toBe(base);
      expect(git(bare, 'rev-parse', `${submitted[1]}^`)).toBe(submitted[0]);
      // The bare repository holds the branch at the approval commit: on the base, the reviewed tree exactly.
      expect(git(bare, 'rev-parse', branch)).toBe(approved.commit);
      expect(git(bare, 'rev-parse', `${approved.commit}^{tree}`)).toBe(git(bare, 'rev-parse', `${submitted[1]}^{tree}`));
      expect(approved.head).toBe(approved.commit);
      expect(git(bare, 'rev-list', '--parents', '-n', '1', approved.commit!).split(' ').slice(1)).toEqual([base]);
      expect(git(bare, 'diff', '--name-status', base, branch)).toBe('A\torganize.py');
      expect(git(bare, 'log', '-1', '--format=%s|%an', branch)).toBe(`${DOWNLOADS_REQUIREMENT}|autoteam`);
      expect(git(bare, 'rev-parse', 'main')).toBe(base);
      // Written in B, reviewed in A: each folder's own worktree held the same file.
      const written = fs.readFileSync(path.join(remoteWorktree(b, bare, branch), 'organize.py'), 'utf8');
      expect(fs.readFileSync(path.join(remoteWorktree(a, bare, branch), 'organize.py'), 'utf8')).toBe(written);
      expect(git(bare, 'show', `${branch}:organize.py`)).toBe(written.trimEnd());

      // `diff` from a folder that took no part, with the poster's clone out of reach (as on another
      // machine): the branch as the remote has it, through a clone of that folder's own.
      const c = folder('autoteam-machine-c-');
      const home = path.join(a, '.autoteam', 'remote');
      fs.renameSync(home, `${home}.away`);
      try {
        const diff = await runCli(['diff', String(task.pipeline), '--board', url, '--dir', c], { cwd: c });
        expect(diff.code, describeRun(diff)).toBe(0);
        const [head, ...patch] = diff.stdout.trimEnd().split('\n');
        expect(head).toBe(`pipeline #${task.pipeline} · ${branch} on ${bare} from ${base.slice(0, 12)} · commit ${approved.commit!.slice(0, 12)} · 1 file: A organize.py`);
        expect(patch.join('\n')).toContain(`+${written.split('\n')[0]}`);
      } finally {
        fs.renameSync(`${home}.away`, home);
      }

      // The merge queue, drained from B (not the poster's folder): main on the remote moves to the approval commit, the branch goes.
      // `--remote` names the remote as the other commands take it (the pipeline's record names it too).
      const merged = await runCli(['merge', '--queue', '--board', url, '--dir', b, '--remote', bare], { cwd: b });
      expect(merged.code, describeRun(merged)).toBe(0);
      expect(merged.stdout.trim()).toBe(`pipeline #${task.pipeline}: ${branch} merged into main on ${bare} (fast-forward to ${approved.commit!.slice(0, 12)}); its branch on the remote and this folder's worktree of it are removed`);
      expect(git(bare, 'rev-parse', 'main')).toBe(approved.commit);
      expect(git(bare, 'diff', '--name-status', base, 'main')).toBe('A\torganize.py');
      expect(git(bare, 'branch', '--list', branch)).toBe('');
      expect(fs.existsSync(remoteWorktree(b, bare, branch))).toBe(false);
      await board.tasks.refresh();
      expect(board.tasks.get(reviews.at(-1)!.id).artifacts.outcome).toEqual({ action: 'merged', into: 'main', commit: approved.commit, by: expect.any(String) });
      // Merged, its branch gone from the remote: `diff` in C reads the commit from main.
      const after = await runCli(['diff', String(task.pipeline), '--board', url, '--dir', c], { cwd: c });
      expect(after.code, describeRun(after)).toBe(0);
      expect(after.stdout.split('\n')[0]).toBe(`pipeline #${task.pipeline} · merged into main at ${approved.commit!.slice(0, 12)} · its commit ${approved.commit!.slice(0, 12)} from ${base.slice(0, 12)}`);
      expect(after.stdout).toContain(`+${written.split('\n')[0]}`);
    } finally {
      await session.close(3_000);
      await board.close();
      for (const worker of workers) {
        const exited = new Promise<number | null>((resolve) => worker.once('exit', (code) => resolve(code)));
        worker.kill('SIGTERM');
        expect(await exited).toBe(0);
      }
    }
  });
});

describe('a remote that cannot be used', () => {
  it('`--remote` or repository.remote that does not answer stops the run at start with one line naming it, credentials hidden', async () => {
    const dir = folder('autoteam-badremote-');
    const missing = path.join(dir, 'no-such.git');
    const flag = await runCli(['run', '--auto', '--remote', missing, 'Write a word counter'], { cwd: dir });
    expect(flag.code, describeRun(flag)).toBe(2);
    expect(flag.stderr.trim().split('\n').at(-1)).toMatch(new RegExp(`^autoteam: cannot reach the remote ${missing}: `));
    fs.writeFileSync(path.join(dir, 'autoteam.config.json'), JSON.stringify({ repository: { remote: 'http://me:S3cretPw@127.0.0.1:1/p.git' } }));
    const config = await runCli(['run', '--auto', 'Write a word counter'], { cwd: dir });
    expect(config.code, describeRun(config)).toBe(2);
    expect(config.stderr).toMatch(/^autoteam: cannot reach the remote http:\/\/me:\*\*\*@127\.0\.0\.1:1\/p\.git: /m);
    expect(`${config.stdout}${config.stderr}`).not.toContain('S3cretPw');
    // Refused before the board was opened: nothing posted, and nothing made in the folder (no board, no clone).
    expect(fs.readdirSync(dir)).toEqual(['autoteam.config.json']);
    // A remote that answers without the base branch the config names is refused as early.
    const { bare } = bareRepository();
    fs.writeFileSync(path.join(dir, 'autoteam.config.json'), JSON.stringify({ repository: { remote: bare, base: 'develop' } }));
    const noBase = await runCli(['post', 'Write a word counter'], { cwd: dir });
    expect(noBase.code, describeRun(noBase)).toBe(2);
    expect(noBase.stderr.trim()).toBe(`autoteam: ${path.join(dir, 'autoteam.config.json')}: repository.base: the remote ${bare} has no branch develop`);
    expect(fs.readdirSync(dir)).toEqual(['autoteam.config.json']);
  });

  it('a remote given as a relative path is from the folder it was given in: the current one for --remote, the config file\'s for repository.remote', async () => {
    const { bare } = bareRepository();
    const home = path.dirname(bare);
    const board = path.join(home, 'board');
    fs.mkdirSync(board);
    const relative = path.relative(home, bare);
    // --remote from the current folder, the board elsewhere (--dir).
    const flag = await runCli(['post', '--dir', board, '--remote', relative, 'Write a word counter'], { cwd: home });
    expect(flag.code, describeRun(flag)).toBe(0);
    expect(flag.stdout).toMatch(/^posted pipeline #1: task #1 \(requirements\) — .* · branch autoteam\/1-/m);
    // repository.remote from the config file's folder (the board's), whatever the current folder.
    fs.writeFileSync(path.join(board, 'autoteam.config.json'), JSON.stringify({ repository: { remote: path.relative(board, bare) } }));
    const config = await runCli(['post', '--dir', board, 'Write a word counter'], { cwd: os.tmpdir() });
    expect(config.code, describeRun(config)).toBe(0);
    expect(config.stdout).toMatch(/^posted pipeline #2: task #2 \(requirements\) — .* · branch autoteam\/2-/m);
    // Both branches are on the one remote, and the tasks record its absolute path.
    expect(git(bare, 'branch', '--list', 'autoteam/*').split('\n').map((line) => line.trim().replace(/-.*/, ''))).toEqual(['autoteam/1', 'autoteam/2']);
    const tasks = fs.readdirSync(path.join(board, '.tasks')).filter((name) => name.startsWith('task_')).map((name) => JSON.parse(fs.readFileSync(path.join(board, '.tasks', name), 'utf8')) as { artifacts: { git: { remote: string } } });
    expect(tasks.map((task) => task.artifacts.git.remote)).toEqual([bare, bare]);
    // A post that names no remote, beside pipelines whose branches live on one, says so rather than quietly working a folder.
    fs.rmSync(path.join(board, 'autoteam.config.json'));
    const none = await runCli(['post', '--dir', board, 'Write a word counter'], { cwd: board });
    expect(none.code, describeRun(none)).toBe(0);
    expect(none.stdout).toMatch(/^posted pipeline #3: task #3 \(requirements\) — Analyse: Write a word counter$/m);
    expect(none.stderr).toContain(`note: pipeline #2 of this board branches on the remote ${bare}, and this folder names no remote: pipeline #3 works in a folder (workspace/<n>); give --remote (or repository.remote in autoteam.config.json) to branch it there`);
  });

  it('discard in a folder with no clone of the remote leaves the other folders\' worktrees alone, and says where the branch stays', async () => {
    const { bare } = bareRepository();
    const url = await freshDatabase();
    const a = folder('autoteam-machine-a-');
    const c = folder('autoteam-machine-c-');
    const posted = await runCli(['post', '--board', url, '--remote', bare, 'Write a word counter'], { cwd: a });
    expect(posted.code, describeRun(posted)).toBe(0);
    // A works the branch in a worktree of its own clone, as its teammates would.
    const board = await openBoard(url, a);
    const info = board.tasks.get(1).artifacts.git!;
    try {
      await checkoutRemoteTask(a, info, undefined);
    } finally {
      await board.close();
    }
    const worktree = remoteWorktree(a, bare, info.branch);
    expect(fs.existsSync(worktree)).toBe(true);
    expect((await runCli(['cancel', '1', '--board', url], { cwd: c })).code).toBe(0);
    const discarded = await runCli(['discard', '1', '--board', url], { cwd: c });
    expect(discarded.code, describeRun(discarded)).toBe(0);
    // The board holds A's paths; C has none of them, and touches none.
    expect(discarded.stdout).not.toContain(a);
    expect(discarded.stdout.startsWith(`pipeline #1: this folder held no worktree of it; its branch stays on ${bare}, which this folder has no clone of`), discarded.stdout).toBe(true);
    expect(fs.existsSync(worktree)).toBe(true);
    expect(git(bare, 'branch', '--list', info.branch)).toContain(info.branch);
  });
});

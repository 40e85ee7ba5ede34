/**
 * A pipeline's branch on a remote repository, with real git against a real bare repository and two
 * folders standing for two machines: the branch made and pushed by one, fetched by the other at the
 * exact commit a task names, submissions pushed with a lease, the approval commit holding exactly
 * the reviewed tree; the errors (unreachable, no base branch, moved under us) as one line each; and
 * the remote as a merge target.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { RemoteBranchTarget } from '../../src/core/git/merge-target.js';
import type { RemoteError } from '../../src/core/git/remote.js';
import { approveRemote, checkoutRemoteTask, createRemoteBranch, openRemote, pushSubmission } from '../../src/core/git/remote-branch.js';
import { absoluteRemote, redactGitUrl, remoteClone, resolveRemoteUrl } from '../../src/core/git/remote-url.js';
import { fileBoard } from '../../src/core/board/board.js';
import { loadProjectConfig } from '../../src/core/config/project-config.js';
import { BoardLead } from '../../src/core/lead/board-lead.js';
import { localGit, taskWorkspace } from '../../src/core/stages/workspace.js';
import { prepareWorkspace } from '../../src/core/stages/submission.js';
import { submitForReviewTool } from '../../src/core/tools/submit-for-review.js';
import { tempBoard } from '../helpers/pipeline-cli.js';
import { makeToolContext } from '../tools/context.js';
import { bareRepository as sharedBareRepository, personGit } from '../helpers/person-git.js';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

function folder(prefix: string): string {
  const dir = tempBoard(prefix);
  dirs.push(dir);
  return dir;
}

const git = personGit;

const bareRepository = () => sharedBareRepository(folder);

async function refusal(promise: Promise<unknown>): Promise<RemoteError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e as RemoteError,
  );
  if (!error) throw new Error('expected a refusal');
  return error;
}

describe('remote URLs', () => {
  it('redacts a password, and the user of an http(s) URL (a token); an ssh user stays', () => {
    expect(redactGitUrl('https://me:s3cret@git.example.com/team/p.git')).toBe('https://me:***@git.example.com/team/p.git');
    expect(redactGitUrl('https://ghp_token123@github.com/o/r.git')).toBe('https://***@github.com/o/r.git');
    expect(redactGitUrl('ssh://git@host/r.git')).toBe('ssh://git@host/r.git');
    expect(redactGitUrl('/srv/git/p.git')).toBe('/srv/git/p.git');
    expect(redactGitUrl('file:///srv/git/p.git')).toBe('file:///srv/git/p.git');
  });

  it('a redacted remote is reached only with this process\'s own full URL for it', () => {
    expect(resolveRemoteUrl('/srv/p.git', undefined)).toBe('/srv/p.git');
    expect(resolveRemoteUrl('https://me:***@h/p.git', 'https://me:pw@h/p.git')).toBe('https://me:pw@h/p.git');
    expect(() => resolveRemoteUrl('https://me:***@h/p.git', 'https://other:pw@h/p.git')).toThrow(/the pipeline's remote https:\/\/me:\*\*\*@h\/p\.git needs credentials .*repository\.remote/);
  });

  it('a path is made absolute from the folder it was given in; a URL or an scp-like address is kept', () => {
    expect(absoluteRemote('../shared.git', '/home/me/board')).toBe('/home/me/shared.git');
    expect(absoluteRemote('shared.git', '/home/me')).toBe('/home/me/shared.git');
    expect(absoluteRemote('/srv/p.git', '/home/me')).toBe('/srv/p.git');
    expect(absoluteRemote('./odd:name.git', '/home/me')).toBe('/home/me/odd:name.git');
    for (const url of ['ssh://git@host/r.git', 'file:///srv/p.git', 'https://me:pw@h/p.git', 'git@github.com:team/p.git', 'host:p.git']) expect(absoluteRemote(url, '/home/me')).toBe(url);
  });
});

describe('a pipeline branch on a bare repository, worked from two folders', () => {
  it('posted in A, implemented in B, reviewed and approved in A: the branch holds one approval commit with the reviewed tree', async () => {
    const { bare } = bareRepository();
    const url = `file://${bare}`;
    const a = folder('autoteam-machine-a-');
    const b = folder('autoteam-machine-b-');
    const repository = await openRemote(a, { remote: url });
    expect(repository.remote).toMatchObject({ shown: url, base: 'main' });
    const base = git(bare, 'rev-parse', 'main');
    expect(repository.head).toBe(base);

    const posted = await createRemoteBranch(a, repository, 1, 'Write a word counter');
    expect(posted).toMatchObject({ branch: 'autoteam/1-write-a-word-counter', base, head: base, remote: url });
    expect(git(bare, 'rev-parse', posted.branch)).toBe(base);
    // The name is unique on the remote: a second post of the same pipeline number gets -2.
    expect((await createRemoteBranch(a, repository, 1, 'Write a word counter')).branch).toBe('autoteam/1-write-a-word-counter-2');

    // B has no clone yet: it makes one, and works in its own worktree, not the poster's path.
    const task = { pipeline: 1, artifacts: { git: posted } };
    const inB = await checkoutRemoteTask(b, posted, undefined);
    expect(inB.worktree).toBe(taskWorkspace(b, task));
    expect(inB.worktree.startsWith(b)).toBe(true);
    expect(localGit(b, posted).repo).toBe(remoteClone(b, url));
    fs.writeFileSync(path.join(inB.worktree, 'count.py'), 'print(1)\n');
    const submitted = await pushSubmission(inB.worktree, posted, 'Submitted count.py\n', 'engineer@team');
    expect(git(bare, 'rev-parse', posted.branch)).toBe(submitted);
    expect(git(bare, 'log', '-1', '--format=%an <%ae>', submitted)).toBe('autoteam <engineer@team>');

    // A reviews exactly the submitted commit: its worktree (made when it posted) is moved to it.
    const review = { ...posted, head: submitted };
    const inA = await checkoutRemoteTask(a, review, undefined);
    expect(fs.readFileSync(path.join(inA.worktree, 'count.py'), 'utf8')).toBe('print(1)\n');
    // Whatever the review leaves in the worktree is not part of the approval.
    fs.writeFileSync(path.join(inA.worktree, 'scratch.txt'), 'not reviewed\n');
    const approval = await approveRemote(a, review, 'Write a word counter\n\nReview: fine\n', 'reviewer@team');
    expect(approval).toMatch(/^[0-9a-f]{40}$/);
    expect(git(bare, 'rev-parse', posted.branch)).toBe(approval);
    expect(git(bare, 'rev-parse', `${approval}^{tree}`)).toBe(git(bare, 'rev-parse', `${submitted}^{tree}`));
    expect(git(bare, 'rev-list', '--parents', '-n', '1', approval!).split(' ').slice(1)).toEqual([base]);
    expect(git(bare, 'log', '-1', '--format=%s|%an <%ae>', approval!)).toBe('Write a word counter|autoteam <reviewer@team>');
    // Repeated after a crash (the board never heard): the approval already on the remote is the answer.
    expect(await approveRemote(a, review, 'Write a word counter\n\nReview: fine\n', 'reviewer@team')).toBe(approval);

    // The base is untouched: landing the branch is for the person or a merge queue.
    expect(git(bare, 'rev-parse', 'main')).toBe(base);
  });

  it('an approval with no change against the base moves the branch back to the base and commits nothing', async () => {
    const { bare } = bareRepository();
    const a = folder('autoteam-machine-a-');
    const repository = await openRemote(a, { remote: bare });
    const base = git(bare, 'rev-parse', 'main');
    const posted = await createRemoteBranch(a, repository, 4, 'Say hello');
    const { worktree } = await checkoutRemoteTask(a, posted, undefined);
    // The engineer writes the file main already holds: a submitted commit whose tree is the base's.
    fs.writeFileSync(path.join(worktree, 'x.txt'), 'y\n');
    const added = await pushSubmission(worktree, posted, 'add\n', 'engineer@team');
    fs.rmSync(path.join(worktree, 'x.txt'));
    const submitted = await pushSubmission(worktree, { ...posted, head: added }, 'remove\n', 'engineer@team');
    expect(git(bare, 'rev-parse', `${submitted}^{tree}`)).toBe(git(bare, 'rev-parse', `${base}^{tree}`));
    const review = { ...posted, head: submitted };
    expect(await approveRemote(a, review, 'Say hello\n', 'reviewer@team')).toBeNull();
    expect(git(bare, 'rev-parse', posted.branch)).toBe(base);
    // Repeated after a crash: the branch is already at the base.
    expect(await approveRemote(a, review, 'Say hello\n', 'reviewer@team')).toBeNull();
    expect(git(bare, 'rev-parse', 'main')).toBe(base);
  });

  it('a push after someone else moved the branch is refused, one line naming remote and branch, nothing overwritten', async () => {
    const { bare, person } = bareRepository();
    const a = folder('autoteam-machine-a-');
    const repository = await openRemote(a, { remote: bare });
    const posted = await createRemoteBranch(a, repository, 3, 'Something');
    const { worktree } = await checkoutRemoteTask(a, posted, undefined);
    // Someone else pushes to the pipeline's branch after A fetched it.
    git(person, 'fetch', '-q', 'origin');
    git(person, 'checkout', '-q', '-b', 'theirs', `origin/${posted.branch}`);
    fs.writeFileSync(path.join(person, 'theirs.txt'), 'x\n');
    git(person, 'add', '.');
    git(person, 'commit', '-q', '-m', 'theirs');
    git(person, 'push', '-q', 'origin', `HEAD:${posted.branch}`);
    const theirs = git(person, 'rev-parse', 'HEAD');
    fs.writeFileSync(path.join(worktree, 'mine.txt'), 'y\n');
    const error = await refusal(pushSubmission(worktree, posted, 'mine\n', 'engineer@team'));
    expect(error.kind).toBe('moved');
    expect(error.message).toBe(`the remote ${bare} refused the push to ${posted.branch}: someone else moved it (it was at ${posted.base.slice(0, 12)} when this work began); nothing was overwritten`);
    expect(git(bare, 'rev-parse', posted.branch)).toBe(theirs);
  });

  it('an unreachable remote, a remote without the base branch, and credentials that never show', async () => {
    const a = folder('autoteam-machine-a-');
    const gone = path.join(a, 'no-such.git');
    const unreachable = await refusal(openRemote(a, { remote: gone }));
    expect(unreachable.kind).toBe('unreachable');
    expect(unreachable.message).toMatch(new RegExp(`^cannot reach the remote ${gone}: .+`));
    expect(unreachable.message.split('\n')).toHaveLength(1);

    const { bare } = bareRepository();
    const noBase = await refusal(openRemote(a, { remote: bare, base: 'develop' }));
    expect(noBase.message).toBe(`the remote ${bare} has no branch develop`);

    // A URL with a password, on a port nothing listens on: the error names it redacted.
    const secret = 'http://me:S3cretPw@127.0.0.1:1/p.git';
    const hidden = await refusal(openRemote(a, { remote: secret }));
    expect(hidden.message).toMatch(/^cannot reach the remote http:\/\/me:\*\*\*@127\.0\.0\.1:1\/p\.git/);
    expect(hidden.message).not.toContain('S3cretPw');
    // …and the clone's folder is named after the redacted URL, the full one kept in its config only.
    expect(fs.readdirSync(path.join(a, '.autoteam', 'remote')).join(' ')).not.toContain('S3cretPw');
  });
});

describe('a remote branch as a merge target', () => {
  it('tip fetches the branch; advance pushes a fast-forward leased on the old tip, waits on a moved base, refuses a rewrite', async () => {
    const { bare, person } = bareRepository();
    const a = folder('autoteam-merge-');
    const repository = await openRemote(a, { remote: bare });
    const target = new RemoteBranchTarget(repository.top, bare, 'main');
    expect(target.describe()).toBe(`main on ${bare}`);
    const old = await target.tip();
    expect(old).toBe(git(bare, 'rev-parse', 'main'));
    // A commit on top of the base, made in the clone as a queue would after its rebase.
    const tree = git(repository.top, 'rev-parse', `${old}^{tree}`);
    const next = git(repository.top, 'commit-tree', tree, '-p', old, '-m', 'merged');
    expect(await target.advance(old, next)).toEqual({ ok: true });
    expect(git(bare, 'rev-parse', 'main')).toBe(next);
    // Not a fast-forward (back to the old commit): refused before any push.
    await expect(target.advance(next, old)).rejects.toThrow(/cannot advance main on .* not a fast-forward/);
    // The person pushes to main meanwhile: advancing from the tip the queue saw is refused.
    git(person, 'pull', '-q', 'origin', 'main');
    fs.writeFileSync(path.join(person, 'b.txt'), 'b\n');
    git(person, 'add', '.');
    git(person, 'commit', '-q', '-m', 'person');
    git(person, 'push', '-q', 'origin', 'HEAD:main');
    const third = git(repository.top, 'commit-tree', tree, '-p', next, '-m', 'merged again');
    expect(await target.advance(next, third)).toEqual({ ok: false, waiting: `main on ${bare} moved while the pipeline was checked; it is tried again on the next run` });
    expect(git(bare, 'rev-parse', 'main')).toBe(git(person, 'rev-parse', 'HEAD'));
    expect(await target.tip()).toBe(git(person, 'rev-parse', 'HEAD'));
  });
});

describe('a remote that turns a push down itself', () => {
  it("names the remote's refusal and its own words (a protected branch's hook), rather than calling the branch moved", async () => {
    const { bare } = bareRepository();
    const a = folder('autoteam-merge-');
    const repository = await openRemote(a, { remote: bare });
    const target = new RemoteBranchTarget(repository.top, bare, 'main');
    const old = await target.tip();
    const hook = path.join(bare, 'hooks', 'pre-receive');
    fs.writeFileSync(hook, '#!/bin/sh\necho "not allowed to push code to protected branches" >&2\nexit 1\n', { mode: 0o755 });
    const next = git(repository.top, 'commit-tree', git(repository.top, 'rev-parse', `${old}^{tree}`), '-p', old, '-m', 'merged');
    expect(await target.advance(old, next)).toEqual({
      ok: false,
      waiting: `the remote ${bare} refused the push to main: pre-receive hook declined (it says: not allowed to push code to protected branches); nothing was pushed; it is tried again on the next run`,
    });
    expect(git(bare, 'rev-parse', 'main')).toBe(old);
    const { pushBranch } = await import('../../src/core/git/remote.js');
    const error = await refusal(pushBranch(repository.top, bare, next, 'main', old));
    expect(error.kind).toBe('refused');
    // Allowed again: the same advance goes through.
    fs.rmSync(hook);
    expect(await target.advance(old, next)).toEqual({ ok: true });
  });
});

describe('the runtime on a remote branch', () => {
  it('submit_for_review commits and pushes the work and names the pushed commit; a branch moved meanwhile fails the task', async () => {
    const { bare, person } = bareRepository();
    const a = folder('autoteam-machine-a-');
    const posted = await createRemoteBranch(a, await openRemote(a, { remote: bare }), 1, 'Count words');
    const c = makeToolContext();
    try {
      const { worktree } = await checkoutRemoteTask(c.root, posted, undefined);
      const task = await c.ctx.board.create({ subject: 'Implement', role: 'engineer', stage: 'implementation', pipeline: 1, artifacts: { git: posted } });
      Object.assign(c.ctx, { workspace: worktree, task });
      fs.writeFileSync(path.join(worktree, 'count.py'), 'print(2)\n');
      const outcome = await submitForReviewTool.run({ file: 'count.py' }, c.ctx);
      expect(outcome.isError, outcome.content).toBeFalsy();
      const head = git(bare, 'rev-parse', posted.branch);
      expect(outcome.content).toBe(`Submitted count.py for review as ${head.slice(0, 12)} on ${posted.branch}.`);
      expect(outcome.signal).toMatchObject({ kind: 'transition', artifacts: { git: { ...posted, head }, submitted: { file: 'count.py' } } });
      expect(git(bare, 'show', `${head}:count.py`)).toBe('print(2)');

      // Someone else pushes to the branch; the next submission from this folder cannot land.
      git(person, 'fetch', '-q', 'origin');
      git(person, 'checkout', '-q', '-b', 'theirs', `origin/${posted.branch}`);
      git(person, 'commit', '-q', '--allow-empty', '-m', 'theirs');
      git(person, 'push', '-q', 'origin', `HEAD:${posted.branch}`);
      fs.writeFileSync(path.join(worktree, 'count.py'), 'print(3)\n');
      Object.assign(c.ctx, { task: { ...task, artifacts: { git: { ...posted, head } } } });
      const refused = await submitForReviewTool.run({ file: 'count.py' }, c.ctx);
      expect(refused.signal).toEqual({ kind: 'fail', reason: expect.stringMatching(new RegExp(`^the remote ${bare} refused the push to ${posted.branch}: someone else moved it`)) });
      expect(git(bare, 'rev-parse', posted.branch)).toBe(git(person, 'rev-parse', 'HEAD'));
    } finally {
      c.cleanup();
    }
  });

  it('a claim whose remote does not answer is retried later; one whose commit is gone ends', async () => {
    const { bare } = bareRepository();
    const a = folder('autoteam-machine-a-');
    const b = folder('autoteam-machine-b-');
    const posted = await createRemoteBranch(a, await openRemote(a, { remote: bare }), 1, 'Count words');
    const task = (git: object) => ({ id: 1, pipeline: 1, artifacts: { git: { ...posted, ...git } } }) as never;
    const blobs = { get: async () => null, put: async () => undefined } as never;
    const missing = await prepareWorkspace(taskWorkspace(b, task({})), task({ head: 'f'.repeat(40) }), blobs, { rootDir: b });
    expect(missing.gone).toMatch(new RegExp(`^the remote ${bare} no longer has commit ffffffffffff of ${posted.branch}`));
    fs.renameSync(bare, `${bare}.away`);
    const away = await prepareWorkspace(taskWorkspace(b, task({})), task({}), blobs, { rootDir: b });
    expect(away.unavailable).toMatch(new RegExp(`^cannot reach the remote ${bare} \\(branch ${posted.branch}\\): `));
    expect(away.gone).toBeUndefined();
    // A remote whose credentials this folder lacks: handed back for a folder that has them.
    const secret = { ...posted, remote: 'https://me:***@git.example/p.git' };
    const locked = await prepareWorkspace(taskWorkspace(b, { pipeline: 1, artifacts: { git: secret } }), { id: 1, pipeline: 1, artifacts: { git: secret } } as never, blobs, { rootDir: b });
    expect(locked.unavailable).toMatch(/^the pipeline's remote https:\/\/me:\*\*\*@git\.example\/p\.git needs credentials this process does not have/);
  });

  it('a board lead (autoteam post, web, mcp serve) with a remote posts the pipeline on a branch pushed there', async () => {
    const { bare } = bareRepository();
    const dir = folder('autoteam-boardlead-');
    const board = fileBoard(dir);
    const lead = new BoardLead(board, { repository: { remote: bare } });
    try {
      await lead.start();
      const task = await lead.post('Count words');
      expect(task.artifacts.git).toMatchObject({ remote: bare, branch: 'autoteam/1-count-words', base: git(bare, 'rev-parse', 'main') });
      expect(git(bare, 'rev-parse', 'autoteam/1-count-words')).toBe(git(bare, 'rev-parse', 'main'));
    } finally {
      await lead.close();
      await board.close();
    }
  });

  it('autoteam.config.json takes repository.remote and base; a remote must be a non-empty string', () => {
    const dir = folder('autoteam-config-');
    fs.writeFileSync(path.join(dir, 'autoteam.config.json'), JSON.stringify({ repository: { remote: '/srv/p.git', base: 'develop' } }));
    expect(loadProjectConfig(dir).repository).toEqual({ remote: '/srv/p.git', base: 'develop' });
    fs.writeFileSync(path.join(dir, 'autoteam.config.json'), JSON.stringify({ repository: { remote: '' } }));
    expect(() => loadProjectConfig(dir)).toThrow(/autoteam\.config\.json: repository\.remote/);
  });
});

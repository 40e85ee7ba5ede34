import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AutoteamError } from '../errors.js';
import { git, type GitResult, gitMessage } from './git.js';
import { redactGitUrl } from './remote-url.js';

/**
 * A remote repository (any git URL) reached through this folder's own bare clone of it. Every
 * command names the remote `origin`, whose URL is written into the clone's config file, never onto
 * a command line; what git says is shown with any credentials in it redacted.
 */

/**
 * Why a remote refused: it cannot be reached, lacks the branch or commit, the branch moved under us,
 * or the remote turned the push down itself (a hook, a protected branch, a checked-out branch).
 */
export type RemoteErrorKind = 'unreachable' | 'no-branch' | 'moved' | 'missing-commit' | 'refused';

/** A remote's failure: one line naming the remote (redacted) and the branch. */
export class RemoteError extends AutoteamError {
  constructor(
    readonly kind: RemoteErrorKind,
    message: string,
  ) {
    super(message, 'REMOTE_ERROR');
  }
}

/** Every URL in `text` redacted (git names the remote in its messages). */
export function redactUrls(text: string): string {
  return text.replace(/[a-z][a-z0-9+.-]*:\/\/[^\s'"]+/gi, (url) => redactGitUrl(url));
}

function said(result: GitResult): string {
  return redactUrls(gitMessage(result.stderr, result.stdout));
}

/** `"…"` as git's config syntax quotes a value. */
function configValue(value: string): string {
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`;
}

/**
 * This folder's bare clone of `url` at `clone`, made once: `git init --bare` beside it, the remote
 * written into its config, then renamed into place (two teammates of one folder may race to make it;
 * the first rename wins and the other's copy goes).
 */
export async function ensureClone(clone: string, url: string): Promise<void> {
  if (fs.existsSync(path.join(clone, 'HEAD'))) return;
  fs.mkdirSync(path.dirname(clone), { recursive: true });
  const scratch = `${clone}.new-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  try {
    await git(path.dirname(clone), ['init', '-q', '--bare', scratch]);
    // Fetch no tags and keep every object a worktree of the pipeline's branch may still need.
    fs.appendFileSync(path.join(scratch, 'config'), `[remote "origin"]\n\turl = ${configValue(url)}\n\ttagOpt = --no-tags\n[gc]\n\tauto = 0\n`);
    try {
      fs.renameSync(scratch, clone);
    } catch (error) {
      if (!fs.existsSync(path.join(clone, 'HEAD'))) throw error;
    }
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

/** `branch` null: asked for the remote's default branch, which the person never named. */
function unreachable(shown: string, branch: string | null, result: GitResult): RemoteError {
  return new RemoteError('unreachable', `cannot reach the remote ${shown}${branch === null ? '' : ` (branch ${branch})`}: ${said(result)}`);
}

/**
 * Whether `url` answers and has the branch pipelines would start from (`base`, or the one its HEAD
 * names): a RemoteError saying which is wrong, before this folder keeps anything of the remote. The
 * URL reaches git through its environment (GIT_CONFIG_*), never a command line.
 */
export async function probeRemote(url: string, base?: string): Promise<void> {
  const shown = redactGitUrl(url);
  // A remote name of its own, in case the folder git runs in is inside a repository with an `origin`.
  const env = { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'remote.autoteam-probe.url', GIT_CONFIG_VALUE_0: url };
  const result = await git(os.tmpdir(), ['ls-remote', '--symref', 'autoteam-probe', 'HEAD', ...(base ? [`refs/heads/${base}`] : [])], { env, allowFailure: true });
  if (result.exitCode !== 0) throw unreachable(shown, null, result);
  if (base && !result.stdout.split('\n').some((line) => line.endsWith(`\trefs/heads/${base}`))) throw new RemoteError('no-branch', `the remote ${shown} has no branch ${base}`);
  if (!base && !/^ref: refs\/heads\/\S+\tHEAD$/m.test(result.stdout)) throw noDefaultBranch(shown);
}

/** An empty remote, or one whose HEAD names no branch. */
export function noDefaultBranch(shown: string): RemoteError {
  return new RemoteError('no-branch', `the remote ${shown} names no default branch (an empty repository?): push a first commit, or set repository.base`);
}

/** The commit `branch` points to on the remote now, or null when the remote has no such branch. */
export async function remoteTip(clone: string, shown: string, branch: string): Promise<string | null> {
  const result = await git(clone, ['ls-remote', '--heads', 'origin', `refs/heads/${branch}`], { allowFailure: true });
  if (result.exitCode !== 0) throw unreachable(shown, branch, result);
  const line = result.stdout.split('\n').find((entry) => entry.endsWith(`\trefs/heads/${branch}`));
  return line ? line.split('\t')[0]! : null;
}

/** The branch the remote's HEAD names (its default branch), or null when it names none. */
export async function remoteDefaultBranch(clone: string, shown: string): Promise<string | null> {
  const result = await git(clone, ['ls-remote', '--symref', 'origin', 'HEAD'], { allowFailure: true });
  if (result.exitCode !== 0) throw unreachable(shown, null, result);
  return /^ref: refs\/heads\/(\S+)\tHEAD$/m.exec(result.stdout)?.[1] ?? null;
}

/** Fetches `branch` into `refs/remotes/origin/<branch>` of the clone; the commit it is at. */
export async function fetchBranch(clone: string, shown: string, branch: string): Promise<string> {
  const result = await git(clone, ['fetch', '-q', '--no-write-fetch-head', '--no-tags', 'origin', `+refs/heads/${branch}:refs/remotes/origin/${branch}`], { allowFailure: true });
  if (result.exitCode !== 0) {
    if (/couldn't find remote ref/i.test(result.stderr)) throw new RemoteError('no-branch', `the remote ${shown} has no branch ${branch}`);
    throw unreachable(shown, branch, result);
  }
  return (await git(clone, ['rev-parse', `refs/remotes/origin/${branch}`])).stdout.trim();
}

/** Whether the clone holds `commit`. */
export async function hasCommit(clone: string, commit: string): Promise<boolean> {
  return (await git(clone, ['cat-file', '-e', `${commit}^{commit}`], { allowFailure: true })).exitCode === 0;
}

/**
 * Pushes `commit` to the remote's `branch` only while the branch is still at `expected` (null: only
 * while there is no such branch): someone else's move is refused, never overwritten. `cwd` is the
 * clone or one of its worktrees.
 */
export async function pushBranch(cwd: string, shown: string, commit: string, branch: string, expected: string | null): Promise<void> {
  const lease = `--force-with-lease=refs/heads/${branch}:${expected ?? ''}`;
  const result = await git(cwd, ['push', '-q', '--porcelain', '--no-verify', lease, 'origin', `${commit}:refs/heads/${branch}`], { allowFailure: true });
  if (result.exitCode !== 0) {
    // --porcelain puts each ref's fate on stdout: `!` and `[remote rejected] (why)` when the remote
    // turned it down itself, `[rejected] (stale info)` when the lease did not hold.
    const turnedDown = refusal(result);
    if (turnedDown) throw new RemoteError('refused', `the remote ${shown} refused the push to ${branch}: ${turnedDown}; nothing was pushed`);
    if (/^!\s/m.test(result.stdout)) {
      const was = expected ? `at ${expected.slice(0, 12)}` : 'absent';
      throw new RemoteError('moved', `the remote ${shown} refused the push to ${branch}: someone else moved it (it was ${was} when this work began); nothing was overwritten`);
    }
    throw unreachable(shown, branch, result);
  }
  await git(cwd, ['update-ref', `refs/remotes/origin/${branch}`, commit]);
}

/** What a remote that turned a push down said (`[remote rejected] (why)`, and its own `remote:` lines), or null. */
function refusal(result: GitResult): string | null {
  const why = /^!\t[^\t]*\t\[remote rejected\] \((.*)\)$/m.exec(result.stdout)?.[1];
  if (why === undefined) return null;
  const says = result.stderr.split('\n').flatMap((line) => (line.startsWith('remote: ') ? [line.slice('remote: '.length).trim()] : [])).filter(Boolean).join(' ');
  return redactUrls(says ? `${why} (it says: ${says.length > 300 ? `${says.slice(0, 300)}…` : says})` : why);
}

/**
 * Deletes the remote's `branch` only while it is still at `expected`: a branch someone moved on
 * meanwhile is kept (refused as `moved`), and one already gone is no error.
 */
export async function deleteBranch(cwd: string, shown: string, branch: string, expected: string): Promise<void> {
  const result = await git(cwd, ['push', '-q', '--porcelain', '--no-verify', `--force-with-lease=refs/heads/${branch}:${expected}`, 'origin', `:refs/heads/${branch}`], { allowFailure: true });
  if (result.exitCode !== 0) {
    if ((await remoteTip(cwd, shown, branch)) === null) return;
    const turnedDown = refusal(result);
    if (turnedDown) throw new RemoteError('refused', `the remote ${shown} refused to delete ${branch}: ${turnedDown}; it was kept`);
    if (/^!\s/m.test(result.stdout)) throw new RemoteError('moved', `the remote ${shown} refused to delete ${branch}: someone else moved it past ${expected.slice(0, 12)}; it was kept`);
    throw unreachable(shown, branch, result);
  }
  await git(cwd, ['update-ref', '-d', `refs/remotes/origin/${branch}`], { allowFailure: true });
}

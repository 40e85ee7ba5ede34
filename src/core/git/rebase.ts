import fs from 'node:fs';
import path from 'node:path';
import { git, gitMessage, GitError } from './git.js';

/**
 * A pipeline's branch moved onto a newer base, always in the pipeline's own worktree (never in the
 * person's working tree), without the repository's hooks. The runtime is the committer of what it
 * rewrites; the authors stay as they were.
 */

/** Without the person's hooks (as commitWorktree), signing, or an editor. */
const QUIET = ['-c', 'core.hooksPath=/dev/null', '-c', 'commit.gpgsign=false', '-c', 'core.editor=true'];

function committer(email: string): Record<string, string> {
  return { GIT_COMMITTER_NAME: 'autoteam', GIT_COMMITTER_EMAIL: email };
}

/** The branch HEAD of `repoTop` is on, or null when it is detached. */
export async function currentBranch(repoTop: string): Promise<string | null> {
  const result = await git(repoTop, ['symbolic-ref', '--short', '-q', 'HEAD'], { allowFailure: true });
  return result.exitCode === 0 ? result.stdout.trim() : null;
}

export type RebaseOutcome =
  /** The branch already sat on `tip`: nothing was rewritten. */
  | { kind: 'on tip'; head: string }
  | { kind: 'rebased'; head: string }
  /** The rebase stopped: it was aborted, the branch is as it was; `files` conflicted. */
  | { kind: 'conflict'; files: string[] };

/** Rebases the branch checked out in `worktree` onto `tip`; a conflict is aborted, never left half-done. */
export async function rebaseOnto(worktree: string, tip: string, email: string): Promise<RebaseOutcome> {
  const head = (await git(worktree, ['rev-parse', 'HEAD'])).stdout.trim();
  const base = (await git(worktree, ['merge-base', head, tip])).stdout.trim();
  if (base === tip) return { kind: 'on tip', head };
  const rebased = await git(worktree, [...QUIET, 'rebase', '-q', tip], { allowFailure: true, env: committer(email) });
  if (rebased.exitCode === 0) return { kind: 'rebased', head: (await git(worktree, ['rev-parse', 'HEAD'])).stdout.trim() };
  const files = (await git(worktree, ['diff', '--name-only', '--diff-filter=U'], { allowFailure: true })).stdout.split('\n').filter(Boolean);
  const abort = await git(worktree, ['rebase', '--abort'], { allowFailure: true });
  if (files.length === 0) {
    throw new GitError(`git rebase ${tip.slice(0, 12)}`, `${gitMessage(rebased.stderr, rebased.stdout)}${abort.exitCode === 0 ? ' (the rebase was aborted)' : ''}`, rebased.exitCode);
  }
  return { kind: 'conflict', files };
}

/**
 * Moves the worktree's branch to `tip` and lays the pipeline's change (its `commit` against where the
 * branch started) over it,
 * uncommitted, so an engineer can finish it there: files that conflict hold git's conflict markers.
 * Returns the files that conflicted. The change is the branch's own work: nothing else is lost.
 */
export async function reapplyOnto(worktree: string, commit: string, tip: string): Promise<string[]> {
  const before = (await git(worktree, ['rev-parse', 'HEAD'])).stdout.trim();
  await git(worktree, ['reset', '-q', '--hard', tip]);
  const merged = await git(worktree, [...QUIET, 'merge', '--squash', '--no-commit', commit], { allowFailure: true });
  const files = (await git(worktree, ['diff', '--name-only', '--diff-filter=U'], { allowFailure: true })).stdout.split('\n').filter(Boolean);
  if (merged.exitCode !== 0 && files.length === 0) {
    // Not a conflict: the branch goes back to where it was, so its commit is not lost.
    await git(worktree, ['reset', '-q', '--hard', before], { allowFailure: true });
    throw new GitError(`git merge --squash ${commit.slice(0, 12)}`, gitMessage(merged.stderr, merged.stdout), merged.exitCode);
  }
  // The index back to the branch (the tip): the whole change, markers and all, is the worktree's to commit on approval.
  await git(worktree, ['reset', '-q']);
  const gitDir = (await git(worktree, ['rev-parse', '--git-dir'])).stdout.trim();
  for (const name of ['SQUASH_MSG', 'MERGE_MSG', 'AUTO_MERGE']) fs.rmSync(path.resolve(worktree, gitDir, name), { force: true });
  return files;
}

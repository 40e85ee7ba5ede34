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

/** The committer of every commit the runtime rewrites: what tells its rebase from the person's. */
export const RUNTIME_COMMITTER = 'autoteam';

function committer(email: string): Record<string, string> {
  return { GIT_COMMITTER_NAME: RUNTIME_COMMITTER, GIT_COMMITTER_EMAIL: email };
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

/**
 * Rebases the pipeline's own commits in `worktree` — those after `from`, the commit its branch started
 * at — onto `tip`. What came before `from` is the base's: a commit the base has since dropped or
 * rewritten does not come back with the pipeline. A conflict is aborted, never left half-done.
 */
export async function rebaseOnto(worktree: string, tip: string, from: string, email: string): Promise<RebaseOutcome> {
  const head = (await git(worktree, ['rev-parse', 'HEAD'])).stdout.trim();
  if (from === tip) return { kind: 'on tip', head };
  const rebased = await git(worktree, [...QUIET, 'rebase', '-q', '--onto', tip, from], { allowFailure: true, env: committer(email) });
  if (rebased.exitCode === 0) return { kind: 'rebased', head: (await git(worktree, ['rev-parse', 'HEAD'])).stdout.trim() };
  const files = (await git(worktree, ['diff', '--name-only', '--diff-filter=U'], { allowFailure: true })).stdout.split('\n').filter(Boolean);
  const abort = await git(worktree, ['rebase', '--abort'], { allowFailure: true });
  if (files.length === 0) {
    throw new GitError(`git rebase ${tip.slice(0, 12)}`, `${gitMessage(rebased.stderr, rebased.stdout)}${abort.exitCode === 0 ? ' (the rebase was aborted)' : ''}`, rebased.exitCode);
  }
  return { kind: 'conflict', files };
}

/**
 * Moves the worktree's branch to `tip` and lays the pipeline's change over it — `commit` against
 * `from`, where that change started; nothing of the base before `from` — uncommitted, so an engineer
 * can finish it there: files that conflict hold git's conflict markers. Returns the files that
 * conflicted. The change is the branch's own work: nothing else is lost.
 */
export async function reapplyOnto(worktree: string, from: string, commit: string, tip: string, email: string): Promise<string[]> {
  const before = (await git(worktree, ['rev-parse', 'HEAD'])).stdout.trim();
  // The change alone, as one commit on `from` (never on a branch): picking it is a three-way merge of from → commit onto the tip.
  const tree = (await git(worktree, ['rev-parse', `${commit}^{tree}`])).stdout.trim();
  const identity = { GIT_AUTHOR_NAME: 'autoteam', GIT_AUTHOR_EMAIL: email, ...committer(email) };
  const change = (await git(worktree, [...QUIET, 'commit-tree', tree, '-p', from, '-m', `the change of ${commit.slice(0, 12)}`], { env: identity })).stdout.trim();
  await git(worktree, ['reset', '-q', '--hard', tip]);
  const picked = await git(worktree, [...QUIET, 'cherry-pick', '--no-commit', change], { allowFailure: true, env: identity });
  const files = (await git(worktree, ['diff', '--name-only', '--diff-filter=U'], { allowFailure: true })).stdout.split('\n').filter(Boolean);
  if (picked.exitCode !== 0 && files.length === 0) {
    // Not a conflict: the branch goes back to where it was, so its commit is not lost.
    await git(worktree, ['cherry-pick', '--abort'], { allowFailure: true });
    await git(worktree, ['reset', '-q', '--hard', before], { allowFailure: true });
    throw new GitError(`git cherry-pick --no-commit ${commit.slice(0, 12)}`, gitMessage(picked.stderr, picked.stdout), picked.exitCode);
  }
  // The index back to the branch (the tip): the whole change, markers and all, is the worktree's to commit on approval.
  await git(worktree, ['reset', '-q']);
  await git(worktree, ['cherry-pick', '--quit'], { allowFailure: true });
  const gitDir = (await git(worktree, ['rev-parse', '--git-dir'])).stdout.trim();
  for (const name of ['CHERRY_PICK_HEAD', 'MERGE_MSG', 'AUTO_MERGE', 'SQUASH_MSG']) fs.rmSync(path.resolve(worktree, gitDir, name), { force: true });
  return files;
}

import fs from 'node:fs';
import path from 'node:path';
import type { GitInfo } from '../board/artifacts.js';
import { git, identityEnv } from './git.js';
import { ensureClone, fetchBranch, hasCommit, noDefaultBranch, pushBranch, RemoteError, remoteDefaultBranch, remoteTip } from './remote.js';
import { redactGitUrl, remoteClone, remoteWorktree, resolveRemoteUrl } from './remote-url.js';
import { addWorktree, branchName, commitWorktree, type Repository, RUNTIME_FILES } from './worktree.js';

/**
 * A pipeline's branch on a remote repository (`repository.remote`), as each folder — each machine —
 * works it: the poster branches from the remote's base and pushes; whoever claims a task fetches the
 * branch into its own worktree at the exact commit the task names; a submission is committed and
 * pushed; the approval commit holds exactly the reviewed tree. Every push is leased on the commit the
 * work started from, so a branch someone else moved is refused, never overwritten.
 */

/** `repository` of autoteam.config.json (or `--remote`): the remote, and the branch pipelines start from. */
export interface RepositorySettings {
  remote: string;
  /** The base branch (default: the one the remote's HEAD names). */
  base?: string;
}

/** The remote as the lead posts on it: this folder's clone, and the base branch's tip now. */
export async function openRemote(rootDir: string, settings: RepositorySettings): Promise<Repository> {
  const shown = redactGitUrl(settings.remote);
  const clone = remoteClone(rootDir, shown);
  await ensureClone(clone, settings.remote);
  const base = settings.base ?? (await remoteDefaultBranch(clone, shown));
  if (!base) throw noDefaultBranch(shown);
  const head = await fetchBranch(clone, shown, base);
  return { top: clone, head, branch: base, dirty: false, remote: { url: settings.remote, shown, base } };
}

/**
 * A new pipeline's branch: from the base branch's tip as the remote has it now, named as in local
 * mode (made unique against the remote's branches), pushed only if nobody made it meanwhile, and
 * checked out in this folder's worktree of it.
 */
export async function createRemoteBranch(rootDir: string, repository: Repository, pipeline: number, requirement: string): Promise<GitInfo> {
  const { shown, base: baseBranch } = repository.remote!;
  const clone = repository.top;
  const base = await fetchBranch(clone, shown, baseBranch);
  const wanted = branchName(pipeline, requirement);
  let branch = wanted;
  for (let n = 2; (await remoteTip(clone, shown, branch)) !== null; n++) branch = `${wanted}-${n}`;
  await pushBranch(clone, shown, base, branch, null);
  const worktree = remoteWorktree(rootDir, shown, branch);
  await checkoutCommit(clone, worktree, base);
  return { repo: clone, branch, base, worktree, remote: shown, head: base, baseBranch };
}

/**
 * Makes this folder's worktree of a task's branch hold exactly the commit the task names (`head`):
 * the clone made if this folder has none (the full URL from `configuredUrl` when the task's hides
 * credentials), the branch fetched. A note when the branch is already past that commit.
 */
export async function checkoutRemoteTask(rootDir: string, info: GitInfo, configuredUrl: string | undefined): Promise<{ worktree: string; note?: string }> {
  const shown = info.remote!;
  const clone = remoteClone(rootDir, shown);
  if (!fs.existsSync(path.join(clone, 'HEAD'))) await ensureClone(clone, resolveRemoteUrl(shown, configuredUrl));
  const tip = await fetchBranch(clone, shown, info.branch);
  const want = info.head ?? info.base;
  if (!(await hasCommit(clone, want))) {
    throw new RemoteError('missing-commit', `the remote ${shown} no longer has commit ${want.slice(0, 12)} of ${info.branch} (its tip is ${tip.slice(0, 12)}): someone else moved the branch`);
  }
  const worktree = remoteWorktree(rootDir, shown, info.branch);
  await checkoutCommit(clone, worktree, want);
  const note = tip !== want ? `${info.branch} on ${shown} is at ${tip.slice(0, 12)}, past ${want.slice(0, 12)}: this task works from ${want.slice(0, 12)}, the commit it names` : undefined;
  return { worktree, ...(note ? { note } : {}) };
}

/** `worktree` (made if missing) at `commit`, detached, with exactly that commit's files (the runtime's own folders kept). */
export async function checkoutCommit(clone: string, worktree: string, commit: string): Promise<void> {
  if (fs.existsSync(path.join(worktree, '.git'))) {
    await git(worktree, ['checkout', '-q', '-f', '--detach', commit]);
    await git(worktree, ['clean', '-fdq', ...RUNTIME_FILES.flatMap((name) => ['-e', name])]);
    return;
  }
  fs.rmSync(worktree, { recursive: true, force: true });
  fs.mkdirSync(path.dirname(worktree), { recursive: true });
  await git(clone, ['worktree', 'prune']);
  await addWorktree(clone, ['-f', '--detach', worktree, commit]);
}

/**
 * The engineer's submission: everything the worktree changed committed on the branch (as
 * `autoteam <email>`) and pushed, leased on the branch's tip as this folder last fetched it. The
 * commit pushed (the task's own when nothing changed).
 */
export async function pushSubmission(worktree: string, info: GitInfo, message: string, email: string): Promise<string> {
  const from = info.head ?? info.base;
  const commit = (await commitWorktree(worktree, from, message, email)) ?? from;
  const fetched = await git(worktree, ['rev-parse', '-q', '--verify', `refs/remotes/origin/${info.branch}`], { allowFailure: true });
  await pushBranch(worktree, info.remote!, commit, info.branch, fetched.exitCode === 0 ? fetched.stdout.trim() : from);
  return commit;
}

/**
 * The approval: one commit on the base whose tree is exactly the reviewed commit's (`head`), with the
 * approval message, pushed leased on the reviewed commit. Null when the reviewed tree is the base's:
 * nothing to commit, and the branch is moved back to the base.
 * An approval repeated after a crash finds its earlier commit (same base, same tree) on the remote.
 */
export async function approveRemote(rootDir: string, info: GitInfo, message: string, email: string): Promise<string | null> {
  const shown = info.remote!;
  const clone = remoteClone(rootDir, shown);
  const reviewed = info.head ?? info.base;
  const treeOf = async (commit: string) => (await git(clone, ['rev-parse', `${commit}^{tree}`])).stdout.trim();
  const tree = await treeOf(reviewed);
  /** The branch moved to `commit`, or found there already by an approval repeated after a crash. */
  const moveTo = async (commit: string, isEarlier: (tip: string) => Promise<boolean>): Promise<string> => {
    try {
      if (commit !== reviewed) await pushBranch(clone, shown, commit, info.branch, reviewed);
      return commit;
    } catch (error) {
      if (!(error instanceof RemoteError) || error.kind !== 'moved') throw error;
      const tip = await fetchBranch(clone, shown, info.branch);
      if (await isEarlier(tip)) return tip;
      throw error;
    }
  };
  // Nothing to commit: the branch goes back to the base, where an approval with no change says it is.
  if (tree === (await treeOf(info.base))) return moveTo(info.base, async (tip) => tip === info.base).then(() => null);
  const made = await git(clone, ['-c', 'commit.gpgsign=false', 'commit-tree', tree, '-p', info.base, '-F', '-'], { env: identityEnv('autoteam', email), input: message });
  return moveTo(made.stdout.trim(), async (tip) => {
    const parents = (await git(clone, ['rev-list', '--parents', '-n', '1', tip])).stdout.trim().split(' ').slice(1);
    return parents.length === 1 && parents[0] === info.base && (await treeOf(tip)) === tree;
  });
}

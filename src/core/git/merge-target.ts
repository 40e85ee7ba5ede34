import { AutoteamError } from '../errors.js';
import { git, gitMessage, operationInProgress, personEnv } from './git.js';
import { namedFiles, untrackedInTheWay } from './in-the-way.js';
import { fetchBranch, pushBranch, RemoteError } from './remote.js';

/**
 * Where the merge queue advances a base branch. The queue rebases and checks a pipeline's branch on
 * `tip()`, then asks `advance(tip, commit)` to move the base, only ever as a fast-forward from the tip
 * it checked against. The local target moves a branch of the person's repository; the remote target
 * (`repository.remote`: the base lives in a remote repository) pushes with a lease instead. Either
 * way a base that cannot move now is an outcome (`waiting`), not an error: the pipeline stays queued.
 */
export interface MergeTarget {
  /** The base as a person reads it: `main`, or `main (checked out in /path)`. */
  describe(): string;
  /** The commit the base points to now. */
  tip(): Promise<string>;
  /**
   * Moves the base from `from` to `to` (a descendant of `from`). `waiting` says, in one line, why it
   * cannot now (the base moved meanwhile, the checkout has uncommitted changes); nothing is changed then.
   */
  advance(from: string, to: string): Promise<AdvanceOutcome>;
}

export type AdvanceOutcome = { ok: true } | { ok: false; waiting: string };

/** The working trees (the main one and every linked worktree) that have `branch` checked out. */
export async function checkoutsOf(repoTop: string, branch: string): Promise<string[]> {
  const list = (await git(repoTop, ['worktree', 'list', '--porcelain'])).stdout;
  const found: string[] = [];
  let current: string | null = null;
  for (const line of list.split('\n')) {
    if (line.startsWith('worktree ')) current = line.slice('worktree '.length);
    else if (line === `branch refs/heads/${branch}` && current) found.push(current);
  }
  return found;
}

/**
 * A branch of the repository at `repoTop`. Not checked out anywhere: its ref is moved atomically
 * (`git update-ref` with the old value, so a branch that moved meanwhile is left alone). Checked out
 * and clean: `git merge --ff-only` in that working tree, as the person. Checked out with uncommitted
 * changes (or an operation under way): it waits, and nothing of the person's is touched.
 */
export class LocalMergeTarget implements MergeTarget {
  constructor(
    private readonly repoTop: string,
    readonly branch: string,
  ) {}

  describe(): string {
    return this.branch;
  }

  async tip(): Promise<string> {
    return (await git(this.repoTop, ['rev-parse', '--verify', `refs/heads/${this.branch}^{commit}`])).stdout.trim();
  }

  async advance(from: string, to: string): Promise<AdvanceOutcome> {
    const checkouts = await checkoutsOf(this.repoTop, this.branch);
    // The person's own operation under way (a rebase onto this branch, say) is finished before the branch moves.
    const mine = await operationInProgress(this.repoTop);
    if (mine) return { ok: false, waiting: `${mine} is under way in ${this.repoTop}; finish or abort it, then merge again` };
    if (checkouts.length === 0) {
      const moved = await git(this.repoTop, ['update-ref', '-m', `autoteam merge queue: fast-forward to ${to.slice(0, 12)}`, `refs/heads/${this.branch}`, to, from], { allowFailure: true });
      if (moved.exitCode === 0) return { ok: true };
      return { ok: false, waiting: `${this.branch} moved while the pipeline was checked (${gitMessage(moved.stderr, moved.stdout)}); it is tried again on the next run` };
    }
    const dir = checkouts[0]!;
    // The main tree was looked at above; a linked worktree of the person's has its own.
    const busy = dir === this.repoTop ? null : await operationInProgress(dir);
    if (busy) return { ok: false, waiting: `${this.branch} is checked out in ${dir} with ${busy} under way; finish or abort it, then merge again` };
    // Staged or not: any change to a tracked file is the person's, and waits.
    const files = (await git(dir, ['diff', '--name-only', 'HEAD'])).stdout.split('\n').filter(Boolean);
    if (files.length) {
      return { ok: false, waiting: `${this.branch} is checked out in ${dir} with uncommitted changes (${files.slice(0, 5).join(', ')}${files.length > 5 ? ', …' : ''}); commit or stash them, then merge again` };
    }
    const head = (await git(dir, ['rev-parse', 'HEAD'])).stdout.trim();
    if (head !== from) return { ok: false, waiting: `${this.branch} moved while the pipeline was checked; it is tried again on the next run` };
    // git refuses an untracked file of the person's in the way, but writes over an ignored one: both wait.
    const yours = await untrackedInTheWay(dir, from, to);
    if (yours.length) return { ok: false, waiting: `${this.branch} is checked out in ${dir}, where the merge would write over ${namedFiles(yours)}: yours and not tracked by git there (an untracked or ignored file, or a folder); move ${yours.length === 1 ? 'it' : 'them'} aside, then merge again` };
    const merged = await git(dir, ['merge', '--ff-only', '-q', to], { allowFailure: true, env: personEnv() });
    if (merged.exitCode !== 0) return { ok: false, waiting: `${this.branch} in ${dir} cannot be fast-forwarded: ${gitMessage(merged.stderr, merged.stdout)}` };
    return { ok: true };
  }
}

/**
 * A branch of a remote repository, reached through this folder's bare clone: `tip` fetches it (so
 * the commit is in the clone, and in its worktrees, for a rebase to start from), `advance` pushes
 * the fast-forward leased on the tip the queue checked against, so a base someone else moved is left
 * alone and the pipeline waits for the next run. The person's own working tree is not involved.
 */
export class RemoteBranchTarget implements MergeTarget {
  constructor(
    private readonly clone: string,
    private readonly shown: string,
    readonly branch: string,
  ) {}

  describe(): string {
    return `${this.branch} on ${this.shown}`;
  }

  tip(): Promise<string> {
    return fetchBranch(this.clone, this.shown, this.branch);
  }

  async advance(from: string, to: string): Promise<AdvanceOutcome> {
    const forward = await git(this.clone, ['merge-base', '--is-ancestor', from, to], { allowFailure: true });
    // The queue only ever asks for a fast-forward: anything else is a bug, never pushed.
    if (forward.exitCode !== 0) throw new AutoteamError(`cannot advance ${this.describe()} from ${from.slice(0, 12)} to ${to.slice(0, 12)}: not a fast-forward`, 'GIT_ERROR');
    try {
      await pushBranch(this.clone, this.shown, to, this.branch, from);
      return { ok: true };
    } catch (error) {
      if (error instanceof RemoteError && error.kind === 'moved') return { ok: false, waiting: `${this.describe()} moved while the pipeline was checked; it is tried again on the next run` };
      // A hook or a protected branch: the remote's own word, and the pipeline stays queued for when it allows the push.
      if (error instanceof RemoteError && error.kind === 'refused') return { ok: false, waiting: `${error.message}; it is tried again on the next run` };
      throw error;
    }
  }
}

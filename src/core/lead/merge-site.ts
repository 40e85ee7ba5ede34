import fs from 'node:fs';
import path from 'node:path';
import type { GitInfo } from '../board/artifacts.js';
import type { BoardLockOptions, TaskStore } from '../board/task-store.js';
import { AutoteamError } from '../errors.js';
import { git, operationInProgress } from '../git/git.js';
import { LocalMergeTarget, type MergeTarget, RemoteBranchTarget } from '../git/merge-target.js';
import { currentBranch, RUNTIME_COMMITTER } from '../git/rebase.js';
import { deleteBranch, ensureClone, fetchBranch, pushBranch, remoteDefaultBranch } from '../git/remote.js';
import { namedFiles } from '../git/in-the-way.js';
import { checkoutCommit } from '../git/remote-branch.js';
import { resolveRemoteUrl } from '../git/remote-url.js';
import { addWorktree, branchTip, commitWorktree, removeWorktree, uncommittedFiles } from '../git/worktree.js';
import { localGit } from '../stages/workspace.js';

/**
 * Where the merge queue works one pipeline, and what it does there besides rebasing and checking.
 * Local: the pipeline's worktree of the person's repository, the base a branch of it. Remote
 * (`repository.remote`): this folder's own clone and worktree, whoever posted the pipeline, the base
 * a branch of the remote; every result other folders need (a rebased commit, a send-back's change)
 * is pushed to the pipeline's branch, leased on what the branch was, and named in its GitInfo.
 */
export interface MergeSite {
  /** The base branch's name. */
  into: string;
  target: MergeTarget;
  /** Where the branch is rebased and checked. */
  worktree: string;
  /** The repository (or clone) the worktree belongs to: out of the checks' sight. */
  repo: string;
  /** Makes the worktree hold the approved commit. */
  prepare(): Promise<void>;
  /** A rebased commit that passed its checks, kept where the next run (in any folder) finds it: GitInfo fields to record. */
  keep(head: string): Promise<Partial<GitInfo>>;
  /** The change laid over the base's tip in the worktree, handed to the revision's engineer: GitInfo fields for it. */
  handOver(tip: string, message: string, email: string): Promise<Partial<GitInfo>>;
  /** After the base advanced to `head`: the pipeline's branch and worktree go. A note when something was kept. */
  finish(head: string): Promise<string | null>;
}

/** A commit as the lines show it. */
export const short = (sha: string) => sha.slice(0, 12);

/** What a merger (the queue's drain, a merge or discard by hand) says as it begins to wait for another that drains the board's merge queue. */
export const WAITING_FOR_MERGER = 'waiting: another merger is draining the merge queue of this board';

/** What it says when that wait is stopped (Ctrl+C): it took nothing from the queue and changed nothing. */
export const STOPPED_WAITING_FOR_MERGER = 'stopped while waiting for the other merger: nothing was done here';

/** What a merge or discard by hand in a session says when the drain it waits for is that session's own (autoMerge, /merge all). */
export const WAITING_FOR_OWN_DRAIN = "waiting: this session's merge queue is draining (autoMerge, or /merge all); this goes on once it has ended";

/** A merger stopped (its `signal`) while it waited for another: nothing was done. */
export class MergeWaitStopped extends AutoteamError {
  constructor() {
    super(STOPPED_WAITING_FOR_MERGER, 'MERGE_QUEUE');
  }
}

/**
 * Runs `work` as the board's one merger, holding its lock `merge-queue` (the queue's drain, a merge or
 * discard by hand). A wait that `options.signal` cut short, before `work` began, is MergeWaitStopped;
 * any other error is itself.
 */
export async function asMerger<T>(tasks: Pick<TaskStore, 'withLock'>, work: () => Promise<T>, options: BoardLockOptions): Promise<T> {
  let holding = false;
  try {
    return await tasks.withLock(
      'merge-queue',
      () => {
        holding = true;
        return work();
      },
      options,
    );
  } catch (error) {
    if (!holding && options.signal?.aborted && (error as Error).name === 'AbortError') throw new MergeWaitStopped();
    throw error;
  }
}

/** Why one pipeline cannot be merged now: it stays queued, and the line says why. */
export class MergeQueueError extends AutoteamError {
  constructor(message: string) {
    super(message, 'MERGE_QUEUE');
  }
}

/**
 * Why a pipeline is not merged while its worktree holds files not committed (uncommittedFiles), or
 * null when it holds none (or is gone): what merges is the approved commit, and the merge removes
 * the worktree with whatever it holds.
 */
export async function uncommittedRefusal(worktree: string): Promise<string | null> {
  const files = fs.existsSync(worktree) ? await uncommittedFiles(worktree) : [];
  if (files.length === 0) return null;
  return `its worktree ${worktree} has changes that are not committed (${namedFiles(files)}): what merges is the approved commit as it was reviewed, and the merge removes the worktree with them; set them aside first (git -C ${worktree} stash --include-untracked: the stash outlives the worktree), then merge again`;
}

/** The site of an approved pipeline (`info.commit` set); a string says why it waits. */
export async function mergeSite(rootDir: string, info: GitInfo & { commit: string }, remoteUrl?: string): Promise<MergeSite | string> {
  return info.remote ? remoteSite(rootDir, info, remoteUrl) : localSite(info);
}

async function localSite(info: GitInfo & { commit: string }): Promise<MergeSite | string> {
  const into = info.baseBranch ?? (await currentBranch(info.repo));
  if (!into) return `HEAD of ${info.repo} is detached, so there is no branch to merge it into; check out a branch`;
  if ((await branchTip(info.repo, into)) === null) return `its base branch ${into} no longer exists in ${info.repo}; create it again (git branch ${into} ${info.base.slice(0, 12)}, where the pipeline started) and merge again`;
  return {
    into,
    target: new LocalMergeTarget(info.repo, into),
    worktree: info.worktree,
    repo: info.repo,
    async prepare() {
      const problem = await restoreApprovedBranch(info);
      if (problem) throw new MergeQueueError(problem);
      if (!fs.existsSync(info.worktree)) {
        // A worktree removed by hand is still registered until pruned, and git would refuse to add it again.
        await git(info.repo, ['worktree', 'prune']);
        await addWorktree(info.repo, [info.worktree, info.branch]);
      }
      // A rebase or merge left under way there by hand is the person's to finish or abort: a stash would fail on it.
      const busy = await operationInProgress(info.worktree);
      if (busy) throw new MergeQueueError(`${busy} is under way in its worktree ${info.worktree}: finish it, or abort it (git -C ${info.worktree} ${busy.split(' ')[1]} --abort), then merge again`);
      // An approved worktree is as committed; changes there since (a send-back cut short, the person's) are neither merged nor dropped.
      const loose = await uncommittedRefusal(info.worktree);
      if (loose) throw new MergeQueueError(loose);
    },
    keep: async () => ({}),
    // The worktree is the engineer's: the change stays there uncommitted.
    handOver: async () => ({}),
    async finish() {
      await removeWorktree(info.repo, info.worktree, info.branch);
      return null;
    },
  };
}

/**
 * The pipeline's local branch at its approved commit, or why it is not: a branch deleted by hand is
 * made again from that commit while git still holds it; one a drain left on its own rebased copy of
 * that commit (stopped between the rebase and its record) is put back on it; one that moved on since
 * the approval otherwise (commits added or rewritten in its worktree) is not merged, since what merges
 * is what was reviewed. Null when it is ready.
 */
export async function restoreApprovedBranch(info: GitInfo & { commit: string }): Promise<string | null> {
  const at = await branchTip(info.repo, info.branch);
  if (at === null) {
    const held = await git(info.repo, ['cat-file', '-e', `${info.commit}^{commit}`], { allowFailure: true });
    if (held.exitCode !== 0) return `its branch ${info.branch} was deleted and git no longer holds its approved commit ${short(info.commit)}: discard the pipeline (/discard, autoteam discard)`;
    await git(info.repo, ['branch', info.branch, info.commit]);
    return null;
  }
  if (at === info.commit) return null;
  const here = fs.existsSync(info.worktree);
  if (await queueRebaseOnto(info, at)) {
    if (here) await git(info.worktree, ['reset', '-q', '--hard', info.commit]);
    else await git(info.repo, ['branch', '-f', info.branch, info.commit]);
    return null;
  }
  const putBack = here ? `git -C ${info.worktree} reset --hard ${short(info.commit)}` : `git -C ${info.repo} branch -f ${info.branch} ${short(info.commit)}`;
  return `its branch ${info.branch} is at ${short(at)}, not at the approved commit ${short(info.commit)}: it changed after the approval, and only what was reviewed is merged (git -C ${info.repo} branch keep-${info.branch.replace(/^autoteam\//, '')} ${short(at)} keeps what it holds now; then ${putBack} puts it back)`;
}

/**
 * Whether the branch at `at` is the queue's own rebase of the approved commit, left by a drain that
 * stopped before it recorded it: the approved commit is not under it, every commit of its own (those
 * its base branch does not have) was committed by the runtime — or it has none, the rebase of a change
 * the base already held (it stands on the base's history then) — and its worktree (if any) has no
 * change and no operation under way. A commit of the person's never is. The base branch it was rebased
 * onto when it is; null when it is not (a branch at its approved commit, or with none approved, is not).
 */
export async function queueRebaseOnto(info: GitInfo, at: string | null): Promise<string | null> {
  if (!info.commit || !at || at === info.commit) return null;
  if ((await git(info.repo, ['merge-base', '--is-ancestor', info.commit, at], { allowFailure: true })).exitCode === 0) return null;
  // Its own commits: those its base branch does not have (the rebase's copies, on the base's tip then).
  const into = info.baseBranch ?? (await currentBranch(info.repo));
  if (!into) return null;
  const own = await git(info.repo, ['log', '--format=%cn', `refs/heads/${into}..${at}`], { allowFailure: true });
  const committers = own.stdout.split('\n').filter(Boolean);
  if (own.exitCode !== 0) return null;
  if (committers.some((name) => name !== RUNTIME_COMMITTER)) return null;
  if (!fs.existsSync(info.worktree)) return into;
  const status = await git(info.worktree, ['status', '--porcelain', '--untracked-files=no'], { allowFailure: true });
  return status.exitCode === 0 && status.stdout.trim() === '' && !(await operationInProgress(info.worktree)) ? into : null;
}

async function remoteSite(rootDir: string, info: GitInfo & { commit: string }, remoteUrl?: string): Promise<MergeSite> {
  const shown = info.remote!;
  const { repo: clone, worktree } = localGit(rootDir, info);
  if (!fs.existsSync(path.join(clone, 'HEAD'))) await ensureClone(clone, resolveRemoteUrl(shown, remoteUrl));
  const into = info.baseBranch ?? (await remoteDefaultBranch(clone, shown));
  if (!into) throw new MergeQueueError(`the remote ${shown} names no default branch and the pipeline names no base branch`);
  /** What the pipeline's branch is at on the remote: the approved commit, until the queue moves it. */
  let at = info.commit;
  return {
    into,
    target: new RemoteBranchTarget(clone, shown, into),
    worktree,
    repo: clone,
    async prepare() {
      const tip = await fetchBranch(clone, shown, info.branch);
      if (tip !== info.commit) throw new MergeQueueError(`its branch ${info.branch} on ${shown} is at ${short(tip)}, not at the approved commit ${short(info.commit)}: someone else moved it`);
      await checkoutCommit(clone, worktree, info.commit);
    },
    async keep(head) {
      await pushBranch(worktree, shown, head, info.branch, at);
      at = head;
      return { head };
    },
    async handOver(tip, message, email) {
      // Committed (conflict markers and all) and pushed, so the engineer's folder, on any machine, fetches it.
      const commit = (await commitWorktree(worktree, tip, message, email)) ?? tip;
      await pushBranch(worktree, shown, commit, info.branch, at);
      at = commit;
      return { head: commit };
    },
    async finish(head) {
      let note: string | null = null;
      try {
        await deleteBranch(clone, shown, info.branch, head);
      } catch (error) {
        // The change is in the base already: a branch that cannot go now does not undo the merge.
        note = `its branch ${info.branch} was kept on ${shown}: ${(error as Error).message}`;
      }
      await removeWorktree(clone, worktree, info.branch);
      return note;
    },
  };
}

import { committedNothing, type GitInfo } from '../board/artifacts.js';
import type { Task } from '../board/schemas.js';
import type { TaskBoardLike as TaskBoard } from '../board/task-rules.js';
import { AutoteamError } from '../errors.js';
import fs from 'node:fs';
import { branchTip, type ChangedFile, changedFiles, mergeBranch, pipelineDiff, removeWorktree } from '../git/worktree.js';
import { namedFiles } from '../git/in-the-way.js';
import { noPipeline, pipelineStatus } from '../stages/pipeline-status.js';
import { deleteBranch, ensureClone, fetchBranch, hasCommit, RemoteError, remoteTip } from '../git/remote.js';
import { remoteClone, resolveRemoteUrl } from '../git/remote-url.js';
import { loadProjectConfig } from '../config/project-config.js';
import { localGit } from '../stages/workspace.js';
import { asMerger, queueRebaseOnto, restoreApprovedBranch, uncommittedRefusal, WAITING_FOR_MERGER } from './merge-site.js';
import { git as runGit } from '../git/git.js';
import { isLockBusy } from '../board/lock.js';

/**
 * What the person does with a pipeline's branch: look at it, merge it into their current branch, or
 * throw it away. Shared by /diff /merge /discard and `autoteam diff|merge|discard`; each returns the
 * text to print and records what was done on the board.
 */

interface Branch {
  tasks: Task[];
  git: GitInfo;
  /** The task that holds the newest git record (the approving review, once approved). */
  holder: Task;
}

/** How a merged pipeline was merged (by the queue or by hand), from the task that records it. */
function mergedOutcome(tasks: readonly Task[]) {
  return tasks.find((task) => task.artifacts.outcome?.action === 'merged')?.artifacts.outcome;
}

function branchOf(board: TaskBoard, id: number, tasks = board.list().filter((task) => task.pipeline === id), options: { merged?: 'allowed' } = {}): Branch {
  if (tasks.length === 0) throw noPipeline(board, id);
  const holders = tasks.filter((task) => task.artifacts.git);
  const holder = holders.find((task) => task.artifacts.git?.commit) ?? holders.at(-1);
  if (!holder) {
    throw new AutoteamError(
      `pipeline #${id} has no branch: it works in workspace/${id} (the board was not in a git repository, or in one with no commit yet, when it was posted; --no-worktree was given; or it is autoteam's own checkout)`,
      'USAGE',
    );
  }
  const done = tasks.find((task) => task.artifacts.outcome);
  if (done && !(options.merged === 'allowed' && done.artifacts.outcome!.action === 'merged')) {
    const outcome = done.artifacts.outcome!;
    const what = outcome.action === 'merged' ? `merged into ${outcome.into} (${outcome.commit?.slice(0, 12)})` : 'discarded';
    // Only discard meets a merged one here (diff shows it, merge says it is done): the words fit what asked.
    throw new AutoteamError(`pipeline #${id} was already ${what}: ${outcome.action === 'merged' ? 'there is no branch left to discard' : 'its branch and worktree are gone'}`, 'USAGE');
  }
  return { tasks, git: holder.artifacts.git!, holder };
}

/**
 * The branch's change against its base, with the list of files first. Merged, its branch and
 * worktree are gone: the change as approved, its commit against the base it started from.
 */
export async function diffPipeline(board: TaskBoard, id: number): Promise<string> {
  const tasks = board.list().filter((task) => task.pipeline === id);
  const { git } = branchOf(board, id, tasks, { merged: 'allowed' });
  const merged = mergedOutcome(tasks);
  if (merged && git.commit) {
    const into = `merged into ${merged.into}${merged.commit ? ` at ${merged.commit.slice(0, 12)}` : ''}`;
    if (merged.noChange) return `pipeline #${id} · ${into} · its change was already in ${merged.into}: nothing of its own to show`;
    const change = await (git.remote ? remoteChange(board.rootDir, git, git.commit) : pipelineDiff(git.repo, git)).catch((error: Error) => {
      throw new AutoteamError(`pipeline #${id} was ${into}, and its approved commit ${git.commit!.slice(0, 12)} cannot be read any more (${error.message})`, 'GIT_ERROR');
    });
    return [`pipeline #${id} · ${into} · its commit ${git.commit.slice(0, 12)} from ${git.base.slice(0, 12)}`, change.diff.trimEnd() || '(no changes)'].join('\n');
  }
  if (git.remote) return remoteDiff(board.rootDir, id, git, pipelineStatus(tasks));
  const tip = git.commit ? await branchTip(git.repo, git.branch) : null;
  // A drain stopped between its rebase and its merge left its own copy on the branch, on the base's new
  // tip: the base's changes since are not the pipeline's, so the approved commit is what is shown.
  const onto = await queueRebaseOnto(git, tip);
  if (git.commit && onto) {
    const { files, diff } = await changeBetween(git.repo, git.base, git.commit);
    const note = `the branch holds the merge queue's rebase of it onto ${onto} (a drain stopped before it merged); the next drain merges it`;
    return [`pipeline #${id} · ${git.branch} from ${git.base.slice(0, 12)} · commit ${git.commit.slice(0, 12)}${fileList(files)} · ${note}`, diff.trimEnd() || '(no changes)'].join('\n');
  }
  // Commits added after the approval: the diff is the branch as it is, so the line says it is not the approved commit alone.
  const moved = tip && tip !== git.commit ? ` — the branch has moved on since, to ${tip.slice(0, 12)}: this is it as it is now` : '';
  // A pipeline that ended unapproved shows its worktree as it was left; its commit is not to come.
  const ended = pipelineStatus(tasks);
  const state = git.commit ? `commit ${git.commit.slice(0, 12)}${moved}` : ended === 'active' ? 'not committed yet' : `${ended}, not approved: its worktree as it was left`;
  const { files, diff } = await pipelineDiff(git.repo, git);
  return [`pipeline #${id} · ${git.branch} from ${git.base.slice(0, 12)} · ${state}${files ? fileList(files) : ''}`, diff.trimEnd() || '(no changes)'].join('\n');
}

/** ` · 2 files: A a.py, M b.py`, as the diff's first line lists them. */
function fileList(files: readonly ChangedFile[]): string {
  return ` · ${files.length} file${files.length === 1 ? '' : 's'}: ${files.map((f) => `${f.status} ${f.path}`).join(', ') || 'none'}`;
}

/** The change from commit `base` to commit `target` in repository `dir`: its files, then its diff. */
async function changeBetween(dir: string, base: string, target: string): Promise<{ files: ChangedFile[]; diff: string }> {
  const files = changedFiles((await runGit(dir, ['diff', '--no-color', '--no-renames', '--name-status', base, target])).stdout);
  return { files, diff: (await runGit(dir, ['diff', '--no-color', '--no-renames', base, target])).stdout };
}

/**
 * A pipeline on a remote, as its branch is there: the approved commit, or before the approval the
 * branch's tip (the engineer's last submission), against the base.
 */
async function remoteDiff(rootDir: string, id: number, git: GitInfo, status: string): Promise<string> {
  const { files, diff, tip } = await remoteChange(rootDir, git, git.commit);
  const moved = git.commit && tip && tip !== git.commit ? ` — the branch has moved on since, to ${tip.slice(0, 12)} on ${git.remote}: this is the approved commit` : '';
  const unapproved = status === 'active' ? 'not approved yet' : `${status}, not approved`;
  const state = git.commit ? `commit ${git.commit.slice(0, 12)}${moved}` : tip && tip !== git.base ? `${unapproved}: the branch's tip on ${git.remote}, ${tip.slice(0, 12)}` : status === 'active' ? 'nothing pushed yet' : `${unapproved}, nothing pushed`;
  return [`pipeline #${id} · ${git.branch} on ${git.remote} from ${git.base.slice(0, 12)} · ${state}${fileList(files)}`, diff.trimEnd() || '(no changes)'].join('\n');
}

/**
 * A remote pipeline's change, read through this folder's clone of the remote (made if missing): the
 * folder that posted it recorded its own clone's paths — another machine's, perhaps — whose worktree
 * never saw the work, which was pushed from the workers' clones. `target`: the commit to show; else
 * the branch's tip. Merged, the branch may be gone and its commit on the base branch.
 */
async function remoteChange(rootDir: string, git: GitInfo, target: string | undefined): Promise<{ files: ChangedFile[]; diff: string; tip: string | null }> {
  const shown = git.remote!;
  const clone = remoteClone(rootDir, shown);
  await ensureClone(clone, resolveRemoteUrl(shown, configuredRemote(rootDir)));
  const tip = await fetchBranch(clone, shown, git.branch).catch((error: unknown) => {
    if (error instanceof RemoteError && error.kind === 'no-branch') return null;
    throw error;
  });
  if (target && !(await hasCommit(clone, target)) && git.baseBranch) await fetchBranch(clone, shown, git.baseBranch);
  const want = target ?? tip;
  if (!want) throw new AutoteamError(`${git.branch} is not on ${shown}: nothing of it to show`, 'USAGE');
  if (!(await hasCommit(clone, want))) throw new AutoteamError(`the remote ${shown} no longer holds commit ${want.slice(0, 12)} of ${git.branch}`, 'GIT_ERROR');
  return { ...(await changeBetween(clone, git.base, want)), tip };
}

/** The full URL of this folder's `repository.remote` (credentials and all), if its config names one that reads. */
function configuredRemote(rootDir: string): string | undefined {
  try {
    return loadProjectConfig(rootDir).repository?.remote;
  } catch {
    return undefined; // a config that does not read: the URL the board recorded is tried as it is
  }
}

/**
 * Runs `work` as the board's one merger (the lock the merge queue drains under), on the board as it is
 * then: a merge or discard by hand never meets a drain that holds the same pipeline.
 */
async function byHand<T>(board: TaskBoard, work: () => Promise<T>, { onLine, signal, patient }: MergerOptions = {}): Promise<T> {
  // The wait is said as it begins.
  const options = { onBusy: () => onLine?.(WAITING_FOR_MERGER), ...(patient ? { patient } : {}), ...(signal ? { signal } : {}) };
  try {
    return await asMerger(board, async () => {
      await board.refresh();
      return work();
    }, options);
  } catch (error) {
    if (isLockBusy(error)) throw new AutoteamError('another merger is draining the merge queue of this board: nothing was done; try again once it has ended', 'MERGE_QUEUE');
    throw error;
  }
}

/**
 * How a merge or discard by hand waits for a drain under way: `onLine` hears the wait begin; `patient`
 * waits the drain out however long its checks take (a person at a terminal, who can stop it), else a
 * folder board's wait gives up after some 25 s (a request of the web board or MCP); `signal` ends the
 * wait (MergeWaitStopped).
 */
export interface MergerOptions {
  onLine?: (line: string) => void;
  signal?: AbortSignal;
  patient?: boolean;
}

/**
 * Merges an approved pipeline's branch into the person's current branch, then removes its worktree
 * and branch, after a drain under way (MergerOptions).
 */
export function mergePipeline(board: TaskBoard, id: number, by: string, options?: MergerOptions): Promise<string> {
  return byHand(board, () => mergeOne(board, id, by), options);
}

async function mergeOne(board: TaskBoard, id: number, by: string): Promise<string> {
  const tasks = board.list().filter((task) => task.pipeline === id);
  // Merged before (by the queue, or a merge given twice): done already, which is not a mistake.
  const merged = mergedOutcome(tasks);
  if (merged) return `pipeline #${id} was already merged into ${merged.into}${merged.commit ? ` at ${merged.commit.slice(0, 12)}` : ''}: nothing to do`;
  const { git, holder } = branchOf(board, id, tasks);
  const status = pipelineStatus(tasks);
  // A merge into the person's checked-out branch, unchecked, cannot move a base others share: the queue's rebase, re-check and leased push can.
  if (git.remote) throw new AutoteamError(`pipeline #${id}'s branch ${git.branch} lives on the remote ${git.remote}, and so does its base: the merge queue merges it there (autoteam merge --queue, or /merge all), rebased onto the base's tip, checked again and pushed`, 'USAGE');
  if (status !== 'approved' || !git.commit) {
    // Failed or cancelled work is worked again by retry (from the stage that ended it), not merged.
    const drop = status === 'active' ? `cancel ${id}, then discard ${id} drops it` : status === 'failed' || status === 'cancelled' ? `retry ${id} works it again, discard ${id} drops it` : `discard ${id} drops it`;
    const state = status === 'active' ? 'is still active' : status === 'failed' ? 'failed' : `was ${status}`;
    throw new AutoteamError(`pipeline #${id} ${state}: only approved work is merged; diff ${id} shows it, ${drop} (each as autoteam <command> ${id}, or /<command> ${id} in the REPL)`, 'USAGE');
  }
  // Someone's work in the worktree since the approval: the merge would remove it with the worktree.
  const loose = await uncommittedRefusal(git.worktree);
  if (loose) throw new AutoteamError(`pipeline #${id} is not merged: ${loose}`, 'USAGE');
  const problem = await restoreApprovedBranch({ ...git, commit: git.commit });
  if (problem) throw new AutoteamError(`pipeline #${id} is not merged: ${problem}`, 'USAGE');
  const result = await mergeBranch(git.repo, git.branch, `Merge ${git.branch} (autoteam pipeline #${id})`, { commit: git.base, ...(git.baseBranch ? { branch: git.baseBranch } : {}) });
  // Merged: the branch's commits are on the person's branch, so the worktree and the branch can go.
  await removeWorktree(git.repo, git.worktree, git.branch);
  // Approved with nothing to commit: the base held the change before the pipeline began.
  const noChange = committedNothing(git);
  await board.update(
    holder.id,
    { artifacts: { outcome: { action: 'merged', into: result.into, commit: result.commit, ...(noChange ? { noChange } : {}), by } } },
    { by, event: 'merged', detail: `${git.branch} into ${result.into} (${noChange ? 'its change was already there' : result.how}) at ${result.commit.slice(0, 12)}` },
  );
  const how = noChange
    ? `merged into ${result.into} (its change was already in ${result.into})`
    : result.how === 'already merged'
      ? `was already merged into ${result.into} (by hand)`
      : `merged into ${result.into} (${result.how}) at ${result.commit.slice(0, 12)}`;
  return `pipeline #${id}: ${git.branch} ${how}; its worktree and branch are removed`;
}

/** Deletes a discarded pipeline's branch on its remote, through this folder's clone `repo` (its worktree gone already): what was removed, or why not. */
async function discardRemoteBranch(repo: string, info: GitInfo): Promise<{ removed: string | null; note: string | null }> {
  const remote = info.remote!;
  if (!fs.existsSync(repo)) return { removed: null, note: `its branch stays on ${remote}, which this folder has no clone of (git push <remote> :${info.branch} deletes it)` };
  const tip = await remoteTip(repo, remote, info.branch);
  if (tip === null) return { removed: null, note: null };
  await deleteBranch(repo, remote, info.branch, tip);
  return { removed: `branch ${info.branch} on ${remote}`, note: null };
}

/** Removes a pipeline's worktree and branch (its commits go with the branch). Not while it is active. */
export function discardPipeline(board: TaskBoard, id: number, by: string, options?: MergerOptions): Promise<string> {
  return byHand(board, () => discardOne(board, id, by), options);
}

async function discardOne(board: TaskBoard, id: number, by: string): Promise<string> {
  const tasks = board.list().filter((task) => task.pipeline === id);
  // Discarded before (a discard given twice): done already, which is not a mistake, as a merge given twice is not.
  if (tasks.some((task) => task.artifacts.outcome?.action === 'discarded')) return `pipeline #${id} was already discarded: nothing to do`;
  const { git, holder } = branchOf(board, id, tasks);
  const status = pipelineStatus(tasks);
  if (status === 'active') throw new AutoteamError(`pipeline #${id} is still active: cancel it first (autoteam cancel ${id}, /cancel ${id} in the REPL), then discard it`, 'USAGE');
  // This folder's own: on a remote, the folder that posted it recorded its clone's paths, which are
  // another folder's (or another machine's) and never touched from here.
  const site = localGit(board.rootDir, git);
  const cloned = !git.remote || fs.existsSync(site.repo);
  const held = cloned ? await branchTip(site.repo, git.branch) : null;
  const had = [fs.existsSync(site.worktree) ? `worktree ${site.worktree}` : null, held ? `branch ${git.branch}` : null].filter(Boolean);
  // What the branch held as it went: past the approved commit when commits were added since (named,
  // not only that commit) — unless those are the queue's own rebase of it (a drain stopped mid-way).
  const tip = git.remote ? null : held;
  const rebased = await queueRebaseOnto(git, tip);
  // Work never committed there (a failed pipeline's last revision, an edit by hand) goes with the worktree: said, not dropped silently.
  const loose = fs.existsSync(site.worktree) ? (await runGit(site.worktree, ['status', '--porcelain'], { allowFailure: true })).stdout.split('\n').filter(Boolean).map((line) => line.slice(3)) : [];
  if (cloned) await removeWorktree(site.repo, site.worktree, git.branch);
  // On a remote the branch lives there too: deleted, leased on the tip it has now.
  const remote = git.remote ? await discardRemoteBranch(site.repo, git) : null;
  if (remote?.removed) had.push(remote.removed);
  await board.update(holder.id, { artifacts: { outcome: { action: 'discarded', by } } }, { by, event: 'discarded', detail: `${git.branch} and its worktree removed` });
  const removed = had.length ? `${had.join(' and ')} removed` : cloned ? 'its worktree and branch were already gone' : 'this folder held no worktree of it';
  const last = tip && tip !== git.commit && tip !== git.base && !rebased ? { what: git.commit ? `its branch was at ${tip}, past the approved commit ${git.commit.slice(0, 12)}` : `its branch was at ${tip}`, sha: tip } : git.commit ? { what: `its commit was ${git.commit}`, sha: git.commit } : null;
  // Named where git holds the commit: a clone of the remote may never have fetched it.
  const kept = last !== null && cloned && (await runGit(site.repo, ['cat-file', '-e', `${last.sha}^{commit}`], { allowFailure: true })).exitCode === 0;
  const keep = kept && last ? `; ${last.what} (git branch ${git.branch} ${last.sha.slice(0, 12)}${git.remote ? ` in ${site.repo}` : ''} brings it back while git keeps the commit, for you to merge with git: autoteam has let this pipeline go)` : last ? `; ${last.what}` : '';
  const dropped = loose.length ? `; its uncommitted changes (${namedFiles(loose)}) went with the worktree` : '';
  return `pipeline #${id}: ${removed}${keep}${dropped}${remote?.note ? `; ${remote.note}` : ''}`;
}

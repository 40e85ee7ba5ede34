import fs from 'node:fs';
import path from 'node:path';
import { DEFAULT_TEAMMATE_SETTINGS, type TeammateSettings } from '../agent/settings.js';
import { committedNothing, type GitInfo, type Issue, type Submitted } from '../board/artifacts.js';
import type { Board } from '../board/board-types.js';
import type { Task } from '../board/schemas.js';
import type { MergeStep } from '../events/schema.js';
import { reapplyOnto, rebaseOnto } from '../git/rebase.js';
import { git } from '../git/git.js';
import { tidyWorktree, worktreeChange } from '../git/worktree.js';
import type { Pipeline } from '../stages/pipeline.js';
import { approvalOf, tasksByPipeline, pipelineStatus } from '../stages/pipeline-status.js';
import { snapshotWorkspace, uploadBlobs } from '../stages/submission.js';
import { type Guard, mergedSince, passesAt, recheckWith, type RecheckLimits } from './merge-checks.js';
import { asMerger, MergeQueueError, type MergeSite, mergeSite, MergeWaitStopped, short, uncommittedRefusal, WAITING_FOR_MERGER, WAITING_FOR_OWN_DRAIN } from './merge-site.js';
import type { MergerOptions } from './branches.js';
import type { HandMerge } from './lead-api.js';
import { age, counted } from '../words.js';

/**
 * The merge queue: approved, unmerged pipelines go into their base branch in approval order. Each is
 * rebased onto the base's tip in its own worktree, the reviewer's checks and tests run again on the
 * rebased tree, and the base is fast-forwarded (MergeTarget). A conflict or a failing check never
 * reaches the base: the pipeline goes back to implementation as a new revision with a blocker. One
 * merger at a time per board (the board's lock `merge-queue`). A pipeline on a remote is merged in
 * this folder's own clone and the base is pushed (merge-site.ts), from whichever folder drains.
 */

export interface QueuedPipeline {
  pipeline: number;
  /** The approving task: it holds the branch (`git`) and gets the outcome. */
  holder: Task;
  git: GitInfo & { commit: string };
  /** When it was approved: the queue's order. */
  approvedAt: string;
}

/** The approved pipelines with a branch and no outcome yet, oldest approval first. */
export function queuedPipelines(tasks: readonly Task[]): QueuedPipeline[] {
  const queued: QueuedPipeline[] = [];
  for (const [pipeline, group] of tasksByPipeline(tasks)) {
    if (pipelineStatus(group) !== 'approved' || group.some((task) => task.artifacts.outcome)) continue;
    const holder = approvalOf(group);
    const info = holder?.artifacts.git;
    if (!holder || !info?.commit) continue;
    const approvedAt = holder.history.findLast((entry) => entry.event === 'completed')?.at ?? holder.updatedAt;
    queued.push({ pipeline, holder, git: { ...info, commit: info.commit }, approvedAt });
  }
  return queued.sort((a, b) => a.approvedAt.localeCompare(b.approvedAt) || a.pipeline - b.pipeline);
}

/** Why nothing is queued: none approved and unmerged, or those that are work in folders, not on branches. */
function emptyQueue(tasks: readonly Task[]): string {
  const unbranched = [...tasksByPipeline(tasks)]
    .filter(([, group]) => pipelineStatus(group) === 'approved' && !group.some((task) => task.artifacts.outcome) && !approvalOf(group)?.artifacts.git?.commit)
    .map(([pipeline]) => `#${pipeline}`);
  if (unbranched.length === 0) return 'the merge queue is empty: no approved pipeline waits to be merged';
  return `the merge queue is empty: approved pipeline${unbranched.length === 1 ? '' : 's'} ${unbranched.join(', ')} worked in a folder (workspace/<n>), not on a branch of a repository, so there is nothing to merge: the files are there to copy`;
}

export interface MergeQueueOptions {
  board: Board;
  /** Sends a pipeline back as a new revision (Pipeline.sendBackApproved). */
  pipelines: Pick<Pipeline, 'sendBackApproved'>;
  /** Who merges: the lead's name (the outcome's `by`, the events' agent). */
  by: string;
  limits: RecheckLimits;
  /** This process's `repository.remote` (the full URL), for a remote whose recorded URL hides credentials. */
  remoteUrl?: string;
  /** Stops the drain: before the next pipeline, and a re-check under way (the pipeline stays queued, never sent back for it). */
  signal?: AbortSignal;
  /** Hears each line as its pipeline is done, before the drain ends (`autoteam merge --queue` prints them as they come). */
  onLine?: (line: string) => void;
}

export class MergeQueue {
  /** The pipelines this drain took from the queue (merged or not), in order; none when it was stopped waiting for another merger. */
  readonly handled: QueuedPipeline[] = [];

  constructor(private readonly options: MergeQueueOptions) {}

  /** Merges every queued pipeline once, in approval order; one line per pipeline. */
  async drain(): Promise<string[]> {
    const { board, signal } = this.options;
    const lines: string[] = [];
    const say = (line: string) => {
      lines.push(line);
      this.options.onLine?.(line);
    };
    // Another merger draining the board's queue holds its lock: said before the wait, not after it, and
    // waited out however long its checks take (patient; the lock of one that died is taken over).
    const onBusy = () => say(WAITING_FOR_MERGER);
    try {
      await asMerger(board.tasks, async () => {
        await board.tasks.refresh();
        const queue = queuedPipelines(board.tasks.list());
        if (queue.length === 0) return say(emptyQueue(board.tasks.list()));
        for (const [i, entry] of queue.entries()) {
          if (signal?.aborted) {
            const rest = queue.slice(i);
            // Each said as a step too: the REPL and `run` show steps, not the drain's lines.
            for (const later of rest) this.emit(later, later.git.baseBranch ?? '', 'waiting', 'the queue was stopped before its turn; it stays in the queue');
            const left = rest.map((later) => `#${later.pipeline}`);
            return say(`stopped: pipeline${left.length === 1 ? '' : 's'} ${left.join(', ')} stay${left.length === 1 ? 's' : ''} in the queue, unmerged (the next drain merges ${left.length === 1 ? 'it' : 'them'})`);
          }
          this.handled.push(entry);
          say(await this.mergeOne(entry, i + 1, queue.length));
        }
      }, { onBusy, patient: true, ...(signal ? { signal } : {}) });
    } catch (error) {
      // Stopped while it waited for the other merger: nothing was taken from the queue.
      if (!(error instanceof MergeWaitStopped)) throw error;
      say(error.message);
    }
    return lines;
  }

  private emit(entry: QueuedPipeline, into: string, step: MergeStep, detail: string, commit?: string): void {
    this.options.board.sink.emit({ type: 'merge_step', pipeline: entry.pipeline, task: entry.holder.id, agent: this.options.by, step, branch: entry.git.branch, into, detail, ...(commit ? { commit } : {}) });
  }

  private async mergeOne(entry: QueuedPipeline, place: number, of: number): Promise<string> {
    const { git: info, pipeline } = entry;
    let site: MergeSite | string;
    try {
      site = await mergeSite(this.options.board.rootDir, info, this.options.remoteUrl);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.emit(entry, info.baseBranch ?? '', 'error', message);
      return `pipeline #${pipeline}: not merged — ${message} (it stays in the queue)`;
    }
    if (typeof site === 'string') {
      this.emit(entry, info.baseBranch ?? '', 'waiting', site);
      return `pipeline #${pipeline}: waits — ${site}`;
    }
    const { into, target, worktree } = site;
    const say = (step: MergeStep, detail: string, commit?: string) => this.emit(entry, into, step, detail, commit);
    try {
      say('queued', `approved ${age(entry.approvedAt)} ago; ${place} of ${of} in the queue`);
      // Approved with nothing to commit: the base held the reviewed files then, and the pipeline has
      // nothing of its own to rebase, check or merge. A base that moved since is not its to check.
      if (committedNothing(info)) {
        // Its worktree goes with the merge: someone's work there since the approval is not dropped.
        const loose = info.remote ? null : await uncommittedRefusal(worktree);
        if (loose) throw new MergeQueueError(loose);
        return await this.merged(entry, site, info.commit, true);
      }
      await site.prepare();
      const tip = await target.tip();
      const email = `${this.options.by}@${this.options.board.registry.read().team}`;
      const rebased = await rebaseOnto(worktree, tip, info.base, email);
      if (rebased.kind === 'conflict') {
        say('rebased', `conflicts with ${into} at ${short(tip)} in ${rebased.files.join(', ')}; the rebase was aborted`);
        const where = info.remote ? `The branch ${info.branch} now holds, as its newest commit,` : 'The worktree now holds';
        const text =
          `merging into ${into} conflicts in ${rebased.files.join(', ')}: ${into} moved on (to ${short(tip)}) and changed the same lines. ` +
          `${where} this change laid over ${into}'s tip, with git's conflict markers (<<<<<<< ======= >>>>>>>) in ${rebased.files.join(', ')}: ` +
          'keep what both sides need, remove every marker, run it again and submit.';
        return await this.sendBack(entry, site, tip, { from: info.base, commit: info.commit }, `conflict with ${into} in ${rebased.files.join(', ')}`, text);
      }
      const head = rebased.head;
      if (head === tip && rebased.kind === 'on tip' && info.commit !== tip) throw new MergeQueueError(`its branch ${info.branch} no longer holds the approved commit ${short(info.commit)}`);
      const guards = await this.guards(entry, site, tip, head);
      if (rebased.kind === 'rebased') say('rebased', `onto ${into} at ${short(tip)}`, head);
      else if (head === info.commit) say('rebased', `already on ${into}'s tip (${short(tip)}): no rebase, the reviewed tree is what merges`, head);
      // The tree the reviewer (or an earlier run of the queue) checked needs no second run of its own
      // checks; those of the pipelines merged since it began, on the files it changes, run on it still.
      if (head !== info.commit || guards.length) {
        const tree = head === info.commit ? 'reviewed' : 'rebased';
        const before = this.options.signal?.aborted === true ? 'before' : 'while';
        const hidden = [this.options.board.rootDir, site.repo];
        const onTip = (guard: Guard) => passesAt(site.repo, tip, guard, hidden, this.options.limits, this.options.signal);
        // Run in the worktree, which held nothing uncommitted (prepare): what the run leaves is its own, and goes.
        const checked = await recheckWith(worktree, head !== info.commit ? entry.holder.artifacts : null, guards, hidden, this.options.limits, onTip, this.options.signal).finally(() => tidyWorktree(worktree));
        // Stopped under way (or before they began): a check cut short proves nothing, and the next drain starts it over.
        if (this.options.signal?.aborted) {
          say('waiting', `stopped ${before} its checks ran again on the ${tree} tree; it stays in the queue`, head);
          return `pipeline #${pipeline}: not merged — stopped ${before} its checks ran again (it stays in the queue)`;
        }
        if (!checked.ok) {
          say('checked', `${checked.failed} fails on the ${tree} tree`, head);
          const { guard } = checked;
          const text = guard
            ? `on ${into}'s tip (${short(tip)}) ${checked.failed} fails with this change: pipeline #${guard.pipeline} was merged into ${into} since this pipeline began, changing ${guard.files.join(', ')} too, and this change breaks what its reviewer checked. Keep what both pipelines need: ${checked.output}`
            : `on ${into}'s tip (${short(tip)}) ${checked.failed} fails, though it passed on the branch as reviewed: ${checked.output}`;
          return await this.sendBack(entry, site, tip, { from: tip, commit: head }, `${checked.failed} fails ${guard ? 'with this change' : 'after a rebase'} onto ${into}`, text);
        }
        say('checked', `${checked.ran.join(', ') || 'nothing recorded to run'} pass on the ${tree} tree`, head);
        if (head !== info.commit) {
          const kept = await site.keep(head);
          // Rebased, its base is the tip it now stands on: its diff is its own change, not the base's since.
          await this.options.board.tasks.update(entry.holder.id, { artifacts: { git: { ...info, ...kept, commit: head, base: tip } } }, { by: this.options.by, event: 'rechecked', detail: `${counted(checked.ran.length, 'check and test run', 'checks and test runs')} pass at ${short(head)}` });
        }
      }
      const advanced = head === tip ? ({ ok: true } as const) : await target.advance(tip, head);
      if (!advanced.ok) {
        say('waiting', advanced.waiting, head);
        return `pipeline #${pipeline}: waits — ${advanced.waiting}`;
      }
      // Nothing on top of the base after the rebase: another pipeline had merged the same change.
      return await this.merged(entry, site, head, head === tip);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      say('error', message);
      return `pipeline #${pipeline}: not merged — ${message} (it stays in the queue)`;
    }
  }

  /** The pipelines merged into the base since this one began whose checks guard the files its change at `head` touches (mergedSince). */
  private async guards(entry: QueuedPipeline, site: MergeSite, tip: string, head: string): Promise<Guard[]> {
    if (head === tip) return [];
    const tasks = this.options.board.tasks.list();
    const began = tasks.find((task) => task.pipeline === entry.pipeline && task.artifacts.git)?.artifacts.git?.base ?? entry.git.base;
    const files = (await git(site.worktree, ['diff', '--name-only', '--no-renames', tip, head])).stdout.split('\n').filter(Boolean);
    return mergedSince(site.repo, tasks, entry.pipeline, began, tip, files);
  }

  /** The pipeline's change is in the base at `head` (`noChange`: it had none of its own there): its site let go, its outcome recorded. */
  private async merged(entry: QueuedPipeline, site: MergeSite, head: string, noChange: boolean): Promise<string> {
    const { into, target } = site;
    const how = noChange ? `its change was already in ${into}` : `fast-forward to ${short(head)}`;
    const note = await site.finish(head);
    await this.options.board.tasks.update(
      entry.holder.id,
      { artifacts: { outcome: { action: 'merged', into, commit: head, ...(noChange ? { noChange } : {}), by: this.options.by } } },
      { by: this.options.by, event: 'merged', detail: `${entry.git.branch} into ${into} (merge queue, ${how})` },
    );
    this.emit(entry, into, 'merged', note ? `${how}; ${note}` : how, head);
    // On a remote, other folders keep their own worktrees of the branch: only this one's goes.
    const removed = entry.git.remote ? "its branch on the remote and this folder's worktree of it are removed" : 'its worktree and branch are removed';
    return `pipeline #${entry.pipeline}: ${entry.git.branch} merged into ${target.describe()} (${how}); ${note ?? removed}`;
  }

  /**
   * Back to implementation: the worktree moved to `tip` with the pipeline's change (`change`: its
   * commit against where it started) laid over it — conflict markers where it conflicts — and a blocker saying why. Locally
   * the change stays uncommitted in the pipeline's worktree; on a remote it is committed and pushed
   * to the pipeline's branch (the site's hand-over), and the revision's `head` names that commit.
   */
  private async sendBack(entry: QueuedPipeline, site: MergeSite, tip: string, change: { from: string; commit: string }, reason: string, text: string): Promise<string> {
    const { git: info, pipeline, holder } = entry;
    const { board, by } = this.options;
    const email = `${by}@${board.registry.read().team}`;
    const conflicted = await reapplyOnto(site.worktree, change.from, change.commit, tip, email);
    const handed = await site.handOver(tip, `Sent back by the merge queue: ${reason}\n`, email);
    const { commit: _reviewed, ...rest } = info;
    const moved: GitInfo = { ...rest, base: tip, ...handed };
    // What it is sent back with, as a submission: an unchanged resubmission (markers left in) is refused.
    const changed = (await worktreeChange(site.worktree, tip, 0)).files.filter((file) => file.status !== 'D').map((file) => file.path);
    // A conflict git leaves without markers (the base deleted a file the pipeline changed) is settled by
    // submitting the file as it is: left out of the snapshot, so that resubmission is not "unchanged".
    const marked = (file: string) => fs.existsSync(path.join(site.worktree, file)) && fs.readFileSync(path.join(site.worktree, file), 'utf8').includes('<<<<<<<');
    const unmarked = new Set(conflicted.filter((file) => !marked(file)));
    const files = snapshotWorkspace(board.rootDir, site.worktree, changed.filter((file) => !unmarked.has(file)));
    // Through the board, so a reviewer in another folder can diff the revision against it.
    await uploadBlobs(board.rootDir, files, board.blobs);
    const main = holder.artifacts.submitted?.file ?? changed[0] ?? '';
    const submitted: Submitted = { file: main, sha256: files[main] ?? '', revision: holder.revision, files };
    const issues: Issue[] = [{ text, severity: 'blocker' }];
    const result = await this.options.pipelines.sendBackApproved(pipeline, { issues, reason, git: moved, submitted }, by);
    if (result.status === 'failed') {
      this.emit(entry, site.into, 'sent_back', `${reason}; the pipeline failed: ${result.reason}`);
      return `pipeline #${pipeline}: not merged — ${result.reason}`;
    }
    // The branch now holds the revision's start: the commit that was approved is named, so it can be found.
    const approved = info.commit ? `; the approved commit was ${short(info.commit)}` : '';
    this.emit(entry, site.into, 'sent_back', `${reason}; revision ${holder.revision + 1} is #${result.next?.id ?? '?'}${approved}`);
    return `pipeline #${pipeline}: not merged — ${reason}; sent back to implementation as revision ${holder.revision + 1}${result.next ? ` (#${result.next.id})` : ''}${approved}`;
  }
}

/** The limits a reviewer's tools run with, from the team's settings: what the queue's re-runs get too. */
export function recheckLimits(settings: Partial<TeammateSettings> = {}): RecheckLimits {
  return {
    commandTimeoutMs: settings.commandTimeoutMs ?? DEFAULT_TEAMMATE_SETTINGS.commandTimeoutMs,
    maxOutputChars: settings.maxOutputChars ?? DEFAULT_TEAMMATE_SETTINGS.maxOutputChars,
    sandbox: settings.sandbox ?? DEFAULT_TEAMMATE_SETTINGS.sandbox,
  };
}

/**
 * One process's merges, one at a time: `/merge all` and the lead's `autoMerge` share it. An automatic
 * run asked for while one is under way runs once more after it (the approval it was asked for may
 * have come too late for the running one); `close` waits for whatever runs and lets no automatic run start after it (before the board closes).
 */
export class MergeRunner {
  private running: Promise<string[]> | null = null;
  private again = false;
  private closed = false;
  /** Aborted by `close`: the drain under way stops before its next pipeline (and a re-check under way). */
  private readonly stopping = new AbortController();

  /**
   * A merge or discard by hand from this process, as it waits for a drain under way: stopped by `close`
   * (MergerOptions.signal), and a wait for this runner's own drain said as that, not as another merger's.
   */
  byHand({ onLine, ...options }: HandMerge = {}): MergerOptions {
    const said = onLine && ((line: string) => onLine(line === WAITING_FOR_MERGER && this.running ? WAITING_FOR_OWN_DRAIN : line));
    return { ...options, signal: this.stopping.signal, ...(said ? { onLine: said } : {}) };
  }

  /** `automatic`: autoteam.config.json `autoMerge` (without it `auto` does nothing); `onError` hears what an automatic run failed on. */
  constructor(
    private readonly queue: (signal: AbortSignal, onLine?: (line: string) => void) => MergeQueue,
    private readonly automatic: { on: boolean; onError: (error: unknown) => void } = { on: false, onError: () => undefined },
  ) {}

  /** Drains now, or after the drain under way; `onLine` hears each line as it is said. */
  run(onLine?: (line: string) => void): Promise<string[]> {
    if (this.running) return this.running.catch(() => undefined).then(() => this.run(onLine));
    if (this.closed) return Promise.resolve(['the session is closing: nothing was merged (autoteam merge --queue merges what is approved)']);
    const run = this.queue(this.stopping.signal, onLine)
      .drain()
      .finally(() => {
        this.running = null;
      });
    this.running = run;
    return run;
  }

  /** For `autoMerge` (a no-op without it): drains now, or once more after the drain under way. */
  auto(): void {
    if (!this.automatic.on || this.closed) return;
    if (this.running) {
      if (this.again) return;
      this.again = true;
      void this.running
        .catch(() => undefined)
        .then(() => {
          this.again = false;
          this.auto();
        });
      return;
    }
    this.run().catch(this.automatic.onError);
  }

  /** Whether a drain is under way or due: what it decides may send a pipeline back to work. */
  get busy(): boolean {
    return this.running !== null || this.again;
  }

  /**
   * No run starts from now on (the session is closing), and the one under way stops before its next
   * pipeline: what it is merging is finished or left queued, never half-done. Waits for it.
   */
  async close(): Promise<void> {
    this.closed = true;
    this.stopping.abort();
    while (this.running) await this.running.catch(() => undefined);
  }
}

import path from 'node:path';
import type { TaskBoardLike } from '../board/task-rules.js';
import type { EventLog } from '../events/log.js';
import type { TeamEvent } from '../events/schema.js';
import { pipelineStatuses } from '../stages/pipeline-status.js';
import { serializeError } from '../errors.js';
import type { LeadEvent } from './session-types.js';

/**
 * What the session says when its file board's event log cannot be written (a full disk, a folder
 * where the file was): once a streak, naming the file. The team works on; only the record is lost.
 */
export function unlogged(rootDir: string, error: unknown): LeadEvent {
  return { type: 'error', code: 'EVENT_LOG', message: `${path.join(rootDir, '.team', 'events.jsonl')} cannot be written (${serializeError(error).message}): the team works on, its events unrecorded` };
}

/** What the session says when its board's event log cannot be read. */
export function unread(error: unknown): LeadEvent {
  const { code, message } = serializeError(error);
  return { type: 'error', code, message: `event log: ${message}` };
}

const ENDED = new Set(['completed', 'failed', 'cancelled']);
const TASK_ENDS = new Set(['task_completed', 'task_failed', 'task_cancelled']);

/**
 * What the front ends render: the board's one ordered log — every thread's and process's events,
 * from the session's start on, in the order they were written (so a step is shown before what it
 * caused) — each event shown once.
 */
export class LogView {
  private readonly following = new AbortController();
  /** The last event shown; null until start(): a session that never started (its lease refused) shows none of the board's past. */
  private shownSeq: number | null = null;
  /** Pipelines the shown events were about, and those whose end was shown. */
  private readonly followed = new Set<number>();
  private readonly ended = new Set<number>();
  /** The same of tasks: a task the board shows ended is waited for until its end is shown too. */
  private readonly followedTasks = new Set<number>();
  private readonly endedTasks = new Set<number>();

  constructor(
    private readonly log: EventLog,
    private readonly board: TaskBoardLike,
    private readonly show: (event: TeamEvent) => void,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** The seq this view follows the log from (0 before start()). */
  startSeq = 0;

  /** Follows the log from its present end. */
  async start(): Promise<void> {
    // What had ended before the view began was never its to show: an event about it now (the merge
    // queue's, on an old approval) does not make catchUp wait for an end already in the past.
    for (const task of this.board.list()) if (ENDED.has(task.status)) this.endedTasks.add(task.id);
    for (const [id, status] of pipelineStatuses(this.board.list())) if (status !== 'active') this.ended.add(id);
    this.shownSeq = (await this.log.read({}, 1).catch(() => [])).at(-1)?.seq ?? 0;
    this.startSeq = this.shownSeq;
    void this.log.subscribe({ since: this.shownSeq }, (event) => this.deliver(event), this.following.signal).catch(this.onError);
  }

  /**
   * Shows what the log holds beyond what was shown: a front end about to say the team is done calls
   * it first. A pipeline or task the board already shows ended is waited for (a few seconds at most)
   * until its end is in the log too: a thread writes the task before its events reach the log (they
   * go in a batch a moment later), so what led to the end is shown before what the caller prints.
   * One whose end never comes (a hand edit) is waited for once. Only the ends the board shows at the
   * call are waited for: a team still at work ends more tasks meanwhile, and waiting for those too
   * would hold the caller's line until the team paused (the queue's result after a sent-back
   * pipeline's whole revision).
   */
  async catchUp(): Promise<void> {
    const until = Date.now() + 5_000;
    // What has ended on the board now; of it, what the log was about is waited for.
    const tasks = this.board.list();
    const statuses = pipelineStatuses(tasks);
    const endedPipelines = [...statuses].filter(([, status]) => status !== 'active').map(([id]) => id);
    const endedTasks = tasks.filter((task) => ENDED.has(task.status)).map((task) => task.id);
    for (;;) {
      if (this.following.signal.aborted || this.shownSeq === null) return;
      for (const event of await this.log.read({ since: this.shownSeq }).catch(() => [])) this.deliver(event);
      const unshown = endedPipelines.filter((id) => this.followed.has(id) && !this.ended.has(id));
      const unshownTasks = endedTasks.filter((id) => this.followedTasks.has(id) && !this.endedTasks.has(id));
      if (unshown.length + unshownTasks.length === 0) return;
      if (Date.now() > until) {
        for (const id of unshown) this.ended.add(id);
        for (const id of unshownTasks) this.endedTasks.add(id);
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** Stops following: nothing more is shown. */
  stop(): void {
    this.following.abort();
  }

  private deliver(event: TeamEvent): void {
    if (this.shownSeq === null || (event.seq ?? 0) <= this.shownSeq || this.following.signal.aborted) return;
    this.shownSeq = event.seq ?? this.shownSeq;
    if (event.pipeline) this.followed.add(event.pipeline);
    // Open again (a pipeline the merge queue sent back): its next end is waited for.
    if (event.type === 'pipeline_status' && event.pipeline) this.ended[event.status === 'active' ? 'delete' : 'add'](event.pipeline);
    if (event.task) this.followedTasks.add(event.task);
    if (event.task && TASK_ENDS.has(event.type)) this.endedTasks.add(event.task);
    this.show(event);
  }
}

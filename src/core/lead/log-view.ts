import type { TaskBoardLike } from '../board/task-rules.js';
import type { EventLog } from '../events/log.js';
import type { TeamEvent } from '../events/schema.js';
import { pipelineStatuses } from '../stages/pipeline-status.js';

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

  constructor(
    private readonly log: EventLog,
    private readonly board: TaskBoardLike,
    private readonly show: (event: TeamEvent) => void,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** Follows the log from its present end. */
  async start(): Promise<void> {
    this.shownSeq = (await this.log.read({}, 1).catch(() => [])).at(-1)?.seq ?? 0;
    void this.log.subscribe({ since: this.shownSeq }, (event) => this.deliver(event), this.following.signal).catch(this.onError);
  }

  /**
   * Shows what the log holds beyond what was shown: a front end about to say the team is done calls
   * it first. A pipeline the board already shows ended is waited for (a few seconds at most) until its
   * end is in the log too: its last thread writes the task before the event.
   */
  async catchUp(): Promise<void> {
    const until = Date.now() + 5_000;
    for (;;) {
      if (this.following.signal.aborted || this.shownSeq === null) return;
      for (const event of await this.log.read({ since: this.shownSeq }).catch(() => [])) this.deliver(event);
      const statuses = pipelineStatuses(this.board.list());
      const unshown = [...this.followed].filter((id) => statuses.get(id) !== 'active' && !this.ended.has(id));
      if (unshown.length === 0 || Date.now() > until) return;
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
    if (event.type === 'pipeline_status' && event.status !== 'active' && event.pipeline) this.ended.add(event.pipeline);
    this.show(event);
  }
}

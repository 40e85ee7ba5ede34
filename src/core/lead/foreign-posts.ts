import type { Task } from '../board/schemas.js';
import type { TeamEvent } from '../events/schema.js';

/**
 * Pipelines the lead's own front end did not post: from another process (`autoteam post` in another
 * shell, a web board or MCP server of its own), or through this session by a front end other than
 * the lead's (the web board beside the REPL, an MCP client). Each is said once, as its first task is
 * posted; the front end that posted one says it itself, and a pipeline appearing only through its
 * teammates' lines would leave the person guessing. A post through this session is noted as it is
 * numbered (Pipeline.post's `numbered`), before anything of it is written, so its first event never
 * comes before the note.
 */
export class ForeignPosts {
  /** Pipelines posted through this session, and who to name for each (null: its front end said it). */
  private readonly posters = new Map<number, string | null>();
  /** Every pipeline an event of the log was about since the session began. */
  private readonly seen = new Set<number>();

  /** Pipeline.post's `numbered` for a post through this session; `from` names a front end other than the lead's. */
  numbered(from: string | null): (pipeline: number) => void {
    return (pipeline) => this.posters.set(pipeline, from);
  }

  /**
   * The line to show for `event` when it opens a pipeline to be said, else null. A pipeline the board
   * held before the session began (a retry from elsewhere posts into it) opened long ago.
   */
  opened(event: TeamEvent, tasks: () => readonly Task[]): string | null {
    const pipeline = event.pipeline;
    if (pipeline == null || this.seen.has(pipeline)) return null;
    this.seen.add(pipeline);
    if (event.type !== 'task_posted' || event.stage === null || event.task == null) return null;
    const older = () => tasks().some((task) => task.pipeline === pipeline && task.id < event.task!);
    const poster = this.posters.has(pipeline) ? this.posters.get(pipeline) : older() ? null : 'another process';
    return poster ? `pipeline #${pipeline} posted from ${poster}: task #${event.task} (${event.stage}) — ${event.subject}` : null;
  }
}

import type { Task } from '../board/schemas.js';
import type { TeamEvent } from '../events/schema.js';

/**
 * Pipelines posted by another process: `autoteam post` in another shell, a web board or MCP server
 * of its own. A front end says its own posts as it makes them; one from elsewhere would otherwise
 * show only through its teammates' lines. This session's own pipelines are noted as each is numbered
 * (Pipeline.post's `numbered`), before anything of it is written, so their first event never comes
 * before the note.
 */
export class ForeignPosts {
  /** This session's pipelines, and every pipeline an event of the log was about since it began. */
  private readonly known = new Set<number>();

  readonly numbered = (pipeline: number): void => {
    this.known.add(pipeline);
  };

  /**
   * The line to show for `event` when it opens a pipeline this session did not post, else null. A
   * pipeline the board held before the session began (a retry posts into it) opened long ago.
   */
  opened(event: TeamEvent, tasks: () => readonly Task[]): string | null {
    const pipeline = event.pipeline;
    if (pipeline == null || this.known.has(pipeline)) return null;
    this.known.add(pipeline);
    if (event.type !== 'task_posted' || event.stage === null || event.task == null) return null;
    if (tasks().some((task) => task.pipeline === pipeline && task.id < event.task!)) return null;
    return `pipeline #${pipeline} posted from another process: task #${event.task} (${event.stage}) — ${event.subject}`;
  }
}

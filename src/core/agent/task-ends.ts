import type { Task } from '../board/schemas.js';
import type { SerializedError } from '../errors.js';
import type { Fence } from '../board/task-types.js';
import type { TaskBoardLike } from '../board/task-rules.js';
import type { Pipeline } from '../stages/pipeline.js';
import { backoffMs } from './backoff.js';
import { formatWait } from '../sizes.js';

/** What ending a task needs of its teammate. */
export interface TaskEndsHost {
  board: TaskBoardLike;
  pipeline: Pipeline;
  settings: { maxAttempts: number; retryBaseMs: number; retryMaxMs: number };
  now(): Date;
  /** A line for a host that prints activity (the board's log has the events). */
  activity(task: number, text: string): void;
}

/** A board that cannot be reached now (a database outage): what it refused may go through later. */
const unreachable = (error: unknown) => (error as { code?: string }).code === 'BOARD_UNREACHABLE';

/**
 * How a teammate's work on a task ends when it does not hand the task on: failed (its pipeline
 * with it, the lead told), or an unfinished attempt that backs the task off.
 *
 * An end the board could not take (unreachable: the database is down, which is often why the work
 * stopped) is owed: `settle`, before the teammate's next claim and once more as it stops, tries it
 * again. Without that the task stayed in progress under this teammate's claim after the database came
 * back, for anyone to take over only when the lease ran out. An owed end is tried until the board
 * takes or refuses it: its claim's fence refuses it once another claim took the task (a lease that
 * merely ran out, with nobody taking over, still takes it, as it should).
 */
export class TaskEnds {
  private owed: Array<{ task: number; write: () => Promise<unknown> }> = [];

  constructor(private readonly host: TaskEndsHost) {}

  /**
   * Tries again the ends the board could not take; the ones it still cannot stay owed. `signal`
   * (the teammate's stop) ends the round before the next one: each try may wait for the board.
   */
  async settle(signal?: AbortSignal): Promise<void> {
    const owed = this.owed;
    this.owed = [];
    for (const [index, end] of owed.entries()) {
      if (signal?.aborted) {
        this.owed.push(...owed.slice(index));
        return;
      }
      await this.write(end.task, end.write);
    }
  }

  /** Ends owed now: the tasks whose end waits for the board. */
  get waiting(): number[] {
    return this.owed.map((end) => end.task);
  }

  /** `write`, owed when the board cannot be reached; any other failure is the caller's. */
  private async write(task: number, write: () => Promise<unknown>): Promise<void> {
    try {
      await write();
    } catch (error) {
      if (!unreachable(error)) throw error;
      this.owed.push({ task, write });
    }
  }

  /** Fails the task; its line is said before the lead hears that the task's pipeline failed. */
  async fail(task: Task, fence: Fence, reason: string): Promise<void> {
    let said = false;
    const say = () => {
      said = true;
      this.host.activity(task.id, `failed #${task.id}: ${reason}`);
    };
    try {
      // A general task's failure reaches the lead too (Pipeline.fail tells it either way).
      await this.write(task.id, () => this.host.pipeline.fail(task, fence, reason, said ? () => undefined : say));
    } finally {
      if (!said) say();
    }
  }

  /**
   * A model call of `task` failed with `error`. One no retry fixes (`fatal`: a broken key, a wrong
   * base URL) hands the task back for whoever runs next; a request refused on a client's first call
   * (MODEL_REFUSED) fails it at once, since its next attempt would be refused alike; anything else is
   * an unfinished attempt, tried again after a back-off of at least `retryAfterMs`.
   */
  async modelError(task: Task, fence: Fence, error: SerializedError, fatal: boolean, retryAfterMs: number): Promise<void> {
    if (fatal) await this.host.board.release(task.id, fence, `model error: ${error.message}`, 'error').catch(() => undefined);
    else if (error.code === 'MODEL_REFUSED') await this.fail(task, fence, error.message);
    else await this.unfinished(task, fence, error.message, 'error', retryAfterMs);
  }

  /**
   * An attempt that did not finish the task — a model or runtime error, or a turn that went idle,
   * switched tasks or ended without the stage's finishing tool — backs the task off (see backoffMs),
   * unclaimable by anyone until then, this teammate included; after `maxAttempts` such attempts it
   * fails and the lead is told. Without the backoff a model that answers `idle` would claim the same
   * task again at once, a model call each time. An endpoint that asked for no request for longer
   * (`atLeastMs`, a rate limit's retry-after) gets that wait instead.
   */
  async unfinished(task: Task, fence: Fence, message: string, kind: 'error' | 'unfinished', atLeastMs = 0): Promise<void> {
    const { board, settings } = this.host;
    const attempts = board.get(task.id).attempts + 1;
    const { maxAttempts, retryBaseMs, retryMaxMs } = settings;
    if (attempts >= maxAttempts) {
      const reason =
        kind === 'error'
          ? `gave up after ${attempts} failed attempts (MAX_ATTEMPTS ${maxAttempts}); last error: ${message}`
          : `no teammate finished it: ${message} (attempt ${attempts} of ${maxAttempts}, MAX_ATTEMPTS)`;
      await this.fail(task, fence, reason).catch(() => undefined);
      return;
    }
    const jittered = Math.max(backoffMs(attempts, retryBaseMs, retryMaxMs), Math.round(atLeastMs));
    const retryAt = new Date(this.host.now().getTime() + jittered);
    await this.write(task.id, () => board.retryLater(task.id, fence, message, retryAt, kind)).catch(() => undefined);
    const wait = formatWait(jittered);
    this.host.activity(
      task.id,
      kind === 'error'
        ? `attempt ${attempts} of #${task.id} failed; retry in ${wait}: ${message}`
        : `released #${task.id} unfinished (${message}); attempt ${attempts} of ${maxAttempts}, claimable again in ${wait}`,
    );
  }
}

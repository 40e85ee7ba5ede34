import type { MemberStatus } from '../board/schemas.js';
import type { TaskBoardLike } from '../board/task-rules.js';
import { sameProcess, type TeamRegistry } from '../board/team-registry.js';
import { NotFoundError, serializeError } from '../errors.js';
import type { EventSink } from '../events/emitter.js';
import type { Trace } from '../trace/trace.js';
import type { TeammateEvent } from './teammate-events.js';

/**
 * A teammate's status as the team sees it: the registry (with a heartbeat while it runs), the trace,
 * its host, and the board's log (going idle, waking from idle to work).
 */
export class TeammateStatus {
  /** The last status set, for a heartbeat that must list this member again. */
  private last: { status: MemberStatus; task: number | null; reason?: string } = { status: 'idle', task: null };

  /** The status last set. */
  get current(): MemberStatus {
    return this.last.status;
  }

  constructor(
    private readonly who: { name: string; role: string },
    private readonly deps: { registry: TeamRegistry; trace: Trace; sink: EventSink; emit: (event: TeammateEvent) => void },
  ) {}

  /**
   * Joins the team, idle. A record of its name that another process held, and that was neither shut
   * down nor marked dead, is a run of this name that is gone (join refuses a live one): a worker
   * killed and started again at once, before the lead's sweep saw it dead. Its tasks in progress
   * would wait for their leases to run out under a claim nobody works: they go back now, as the
   * sweep would have handed them back.
   */
  async join(board: Pick<TaskBoardLike, 'reclaimAllFrom'>): Promise<void> {
    const { name, role } = this.who;
    const before = this.deps.registry.read().members.find((member) => member.name === name);
    await this.deps.registry.join(name, role, { status: 'idle', pid: process.pid });
    if (!before || sameProcess(before) || before.status === 'shutdown' || before.status === 'dead') return;
    await board.reclaimAllFrom(name, `owner ${name} (pid ${before.pid}${before.host ? ` on ${before.host}` : ''}) is gone: ${name} joined again`, 'owner_dead');
  }

  /** The registry's status writes, one after another: a later status never lands before an earlier one. */
  private writes: Promise<unknown> = Promise.resolve();

  /**
   * Sets the status: the log and the host's wakes (`presence`) are told at once; the registry's write
   * is queued behind the ones before it, then the trace and the host are told (`status`). Settles when
   * this write has landed.
   */
  set(status: MemberStatus, task: number | null, reason?: string): Promise<void> {
    const { name, role } = this.who;
    const was = this.last.status;
    if (status === 'idle' && was !== 'idle') this.deps.sink.emit({ type: 'teammate_idle', agent: name, role, ...(reason ? { reason } : {}) });
    if (status === 'working' && was === 'idle') this.deps.sink.emit({ type: 'teammate_woke', agent: name, role, task });
    this.deps.emit({ type: 'presence', name, status });
    this.last = { status, task, ...(reason ? { reason } : {}) };
    const write = this.writes.then(() => this.write(status, task, reason));
    this.writes = write.catch(() => undefined);
    return write;
  }

  /**
   * `set` without waiting for the registry (the start and end of a task: the team's listing is no
   * reason to keep work waiting). A failed write is reported; the next heartbeat lists the status again.
   */
  post(status: MemberStatus, task: number | null, reason?: string): void {
    this.set(status, task, reason).catch((error: unknown) => this.deps.emit({ type: 'error', name: this.who.name, error: serializeError(error) }));
  }

  /**
   * A scan of the board claimed nothing: idle from now. One already idle tells its host it looked
   * (`looked`), so that a task posted while it scanned, whose wake went to another, is not left.
   */
  foundNothing(): void {
    if (this.last.status !== 'idle') this.post('idle', null, 'looking for work');
    else this.deps.emit({ type: 'looked', name: this.who.name });
  }

  private async write(status: MemberStatus, task: number | null, reason?: string): Promise<void> {
    const { name, role } = this.who;
    const update = { task, ...(reason ? { reason } : {}) };
    try {
      await this.deps.registry.setStatus(name, status, update);
    } catch (error) {
      // The team config was deleted (or this member removed by hand): join again instead of working unlisted.
      if (!(error instanceof NotFoundError)) throw error;
      await this.deps.registry.join(name, role, { status, ...update, pid: process.pid });
    }
    this.deps.trace.write({ kind: 'status', agent: name, role, status, task, ...(reason ? { reason } : {}) });
    this.deps.emit({ type: 'status', name, role, status, task, ...(reason ? { reason } : {}) });
  }

  /**
   * A sign of life every `everyMs` while it runs; a member whose beats stop is marked dead by the
   * lead. Each beat goes in the queue of status writes and lists the status that is newest when its
   * turn comes, so it never puts back one that a queued write replaces; one beat waits at a time.
   * Returns the stop.
   */
  beat(everyMs: number): () => void {
    const { name, role } = this.who;
    let queued = false;
    const timer = setInterval(() => {
      if (queued) return;
      queued = true;
      this.writes = this.writes.then(() => {
        queued = false;
        const { status, task, reason } = this.last;
        return this.deps.registry.heartbeat(name, { name, role, status, task, pid: process.pid, ...(reason ? { reason } : {}) }).catch(() => undefined);
      });
    }, everyMs);
    timer.unref();
    return () => clearInterval(timer);
  }
}

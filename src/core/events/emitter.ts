import type { EventLog } from './log.js';
import type { EventInput, TeamEvent } from './schema.js';

/**
 * How long an event waits for others to go in its append: a teammate's events come in bursts (a
 * model call and its tool calls, a completion and the task it posts), and each append is a statement
 * (PostgreSQL's, with a lock and a notification every follower reads) or a locked write.
 */
const BATCH_MS = 5;

/** Something that sees every event a process emits, as it is emitted (telemetry, a front end). */
export type EventTap = (event: TeamEvent) => void;

/**
 * How a thread or process puts events on the board's log: `emit` never blocks and never throws;
 * events are stamped (`ts`, `team`), shown to the taps at once, and appended in order, batched over
 * BATCH_MS (one lock or one statement per batch). A log that cannot be written is reported once per
 * failure streak through `onError`, and the events of that batch are dropped rather than retried
 * forever: the log records the team, it must never stall it.
 */
export class EventSink {
  private queue: TeamEvent[] = [];
  private flushing: Promise<void> = Promise.resolve();
  private scheduled = false;
  private failing = false;
  private lastError: unknown = null;
  private readonly taps = new Set<EventTap>();
  private readonly failures = new Set<(error: unknown) => void>();

  constructor(
    private readonly log: EventLog | null,
    private readonly team: () => string,
    private readonly onError: (error: unknown) => void = () => undefined,
    private readonly now: () => Date = () => new Date(),
    /** How long an event waits for others to go in its append (BATCH_MS). */
    private readonly batchMs = BATCH_MS,
  ) {}

  emit(input: EventInput): TeamEvent {
    let team = '';
    try {
      team = this.team();
    } catch {
      // A team config that cannot be read: the event still counts.
    }
    const event = { ts: this.now().toISOString(), team, ...input } as TeamEvent;
    for (const tap of this.taps) {
      try {
        tap(event);
      } catch {
        // A tap's failure is its own.
      }
    }
    if (!this.log) return event;
    this.queue.push(event);
    if (!this.scheduled) {
      this.scheduled = true;
      setTimeout(() => {
        this.scheduled = false;
        this.flushing = this.flushing.then(() => this.write());
      }, this.batchMs);
    }
    return event;
  }

  /** Adds a tap; returns its removal. */
  tap(tap: EventTap): () => void {
    this.taps.add(tap);
    return () => this.taps.delete(tap);
  }

  /**
   * Adds a listener told, as `onError` is, once per streak of failures to write the log — at once when
   * it comes in the middle of one (the command's board failed before a session listened); returns its removal.
   */
  onFailure(listener: (error: unknown) => void): () => void {
    this.failures.add(listener);
    if (this.failing) tell(listener, this.lastError);
    return () => this.failures.delete(listener);
  }

  /** Waits until everything emitted so far is in the log. */
  async flush(): Promise<void> {
    if (this.scheduled || this.queue.length) {
      this.scheduled = false;
      this.flushing = this.flushing.then(() => this.write());
    }
    await this.flushing;
  }

  private async write(): Promise<void> {
    const batch = this.queue.splice(0);
    if (batch.length === 0 || !this.log) return;
    try {
      await this.log.append(batch);
      this.failing = false;
    } catch (error) {
      this.lastError = error;
      if (this.failing) return;
      // Failing from now, whatever a listener does: one that throws must not leave the chain of writes rejected.
      this.failing = true;
      for (const listener of [this.onError, ...this.failures]) tell(listener, error);
    }
  }
}

function tell(listener: (error: unknown) => void, error: unknown): void {
  try {
    listener(error);
  } catch {
    // A listener's failure is its own, as a tap's is.
  }
}

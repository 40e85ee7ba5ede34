import type { EventFilter, TeamEvent } from './schema.js';

/**
 * The board's one ordered log of events, written by every thread and process of the team. Each
 * appended event gets the next `seq`; readers see events in that order. The file board keeps it in
 * `.team/events.jsonl` (rotated, size-capped), PostgreSQL in `autoteam_events` with NOTIFY.
 */
export interface EventLog {
  /** Appends in order and returns the events with their `seq`. */
  append(events: readonly TeamEvent[]): Promise<TeamEvent[]>;
  /** The events that match, oldest first (at most `limit`, the newest of them). */
  read(filter?: EventFilter, limit?: number): Promise<TeamEvent[]>;
  /**
   * Every matching event from `filter.since` on, in order, as it is appended, until `signal` aborts:
   * first those already in the log, then new ones. Resolves when `signal` aborts.
   */
  subscribe(filter: EventFilter, onEvent: (event: TeamEvent) => void, signal: AbortSignal): Promise<void>;
}

/** Waits `ms`, or less when `signal` aborts or `wake` is called. */
export function pause(ms: number, signal: AbortSignal, wake?: { on(listener: () => void): () => void }): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      off?.();
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    const off = wake?.on(done);
  });
}

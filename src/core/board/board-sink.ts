import { EventSink } from '../events/emitter.js';
import type { EventLog } from '../events/log.js';
import type { TeamRegistry } from './team-registry.js';

/** A board's sink: events stamped with the team of its registry, a failure to write them reported once. */
export function boardSink(log: EventLog, registry: TeamRegistry, options: { onEventError?: (error: unknown) => void; now?: () => Date }): EventSink {
  return new EventSink(log, () => registry.read().team, options.onEventError, options.now);
}

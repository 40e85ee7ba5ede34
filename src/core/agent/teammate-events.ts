import type { MemberStatus } from '../board/schemas.js';
import type { SerializedError } from '../errors.js';
import type { Usage } from '../model/types.js';
import { redact } from '../trace/redact.js';
import type { ExitReason } from '../events/schema.js';

/** What a teammate tells whoever hosts it (the main thread, or the foreground `worker` command). */
export type TeammateEvent =
  | { type: 'status'; name: string; role: string; status: MemberStatus; task: number | null; reason?: string }
  /**
   * The status the moment it changes, before the registry's write has landed (`status` follows it):
   * the host wakes its idle teammates by it, so a write waiting its turn for the team config's lock
   * never keeps a teammate asleep beside a task it could claim.
   */
  | { type: 'presence'; name: string; status: MemberStatus }
  /**
   * A scan of the board, made while idle, claimed nothing: the host wakes it again when the board
   * changed while it looked and still has work for it (BoardWakes.looked).
   */
  | { type: 'looked'; name: string }
  | { type: 'activity'; name: string; role: string; task: number | null; text: string }
  /** What the model wrote in one turn, besides its tool calls (the front ends show a line of it). */
  | { type: 'says'; name: string; role: string; task: number | null; text: string }
  /** One model call's tokens (compaction included), for the cost on screen. */
  | { type: 'usage'; name: string; role: string; model: string; usage: Usage }
  | { type: 'error'; name: string; error: SerializedError }
  | { type: 'exit'; name: string; reason: string; why: ExitReason };

/**
 * Everything a teammate tells its host is redacted first: hosts print it, keep it and write it down.
 * `secrets`: the teammate's secretValues(), read once (reading the environment costs more than redacting).
 */
export function redactEvent(event: TeammateEvent, secrets: readonly string[]): TeammateEvent {
  switch (event.type) {
    case 'activity':
    case 'says':
      return { ...event, text: redact(event.text, secrets) };
    case 'error':
      return { ...event, error: { ...event.error, message: redact(event.error.message, secrets) } };
    case 'exit':
      return { ...event, reason: redact(event.reason, secrets) };
    case 'status':
      return event.reason ? { ...event, reason: redact(event.reason, secrets) } : event;
    default:
      return event;
  }
}

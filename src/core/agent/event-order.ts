import { threadId } from 'node:worker_threads';
import { z } from 'zod';
import type { Message } from '../board/schemas.js';

/**
 * A teammate thread's events reach the lead over postMessage, its messages (questions, pipeline
 * updates) through the board: two channels with no order between them, and a busy lead (an ink
 * render) can read the inbox before the port. So every message a thread sends carries its origin: the
 * process, the thread, and how many events the thread had posted when it sent it. The lead holds the
 * message until that many events of that thread have arrived (see lead/held-messages.ts), so the
 * person reads "[analyst] claimed" before "? analyst asks".
 */
export const OriginSchema = z.object({
  pid: z.number().int(),
  thread: z.number().int(),
  events: z.number().int().nonnegative(),
});

export type Origin = z.infer<typeof OriginSchema>;

/** The origin a message carries, or null (sent by the lead, another process, or before origins). */
export function originOf(message: Message): Origin | null {
  const parsed = OriginSchema.safeParse(message.origin);
  return parsed.success ? parsed.data : null;
}

/** Counts what a thread posts to its host; `stamp` is added to every message the thread sends. */
export class EventCounter {
  private posted = 0;

  constructor(private readonly where: { pid: number; thread: number } = { pid: process.pid, thread: threadId }) {}

  /** One event posted to the host (call after postMessage). */
  count(): void {
    this.posted++;
  }

  readonly stamp = (): { origin: Origin } => ({ origin: { ...this.where, events: this.posted } });
}

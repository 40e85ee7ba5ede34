import { z } from 'zod';
import { EXIT_REASONS } from '../events/schema.js';
import type { TeammateSettings } from './settings.js';
import type { ModelSpec } from '../model/factory.js';
import type { Containment } from '../exec/sandbox.js';
import type { ReplicaRead } from '../board/board-types.js';

/** One teammate of a thread. */
export interface TeammateSeat {
  name: string;
  model: ModelSpec;
  prompt?: string;
  /** When the host started this teammate (ms): a shutdown request older than that was for an earlier one. */
  startedAt?: number;
}

/**
 * workerData for a teammate thread: the teammates it runs, all of one role (a member's copies share a
 * thread where the machine has fewer cores than teammates: manager.ts, `threadsFor`).
 */
export interface TeammateWorkerInit {
  seats: TeammateSeat[];
  role: string;
  rootDir: string;
  /** A postgres:// board to open (absent: the file board in rootDir). */
  board?: string;
  /** Open it following the process's board: its reads come as `replica` messages (ReplicaFeed). */
  follow?: boolean;
  settings: Partial<TeammateSettings>;
  /** What the process found of bubblewrap: probed once per process, not once per thread. */
  containment?: Containment;
}

/**
 * Main thread → worker. `wake` and `stop` are for the teammate `name` (every teammate of the thread
 * without one); a wake with `mail` says a message came for it (MailHint); `model`: its teammates work
 * their next tasks on this model (/model); `replica`: a read of the process's board to take.
 */
export type ToWorker =
  | { type: 'wake'; name?: string; mail?: boolean }
  | { type: 'stop'; reason: string; name?: string }
  | { type: 'model'; spec: ModelSpec }
  | { type: 'replica'; read: ReplicaRead };

const statusEvent = z.object({
  type: z.literal('status'),
  name: z.string(),
  role: z.string(),
  status: z.enum(['working', 'idle', 'waiting', 'shutdown', 'dead']),
  task: z.number().nullable(),
  reason: z.string().optional(),
});

/** Worker → main thread; validated on arrival like any other boundary. */
export const FromWorkerSchema = z.discriminatedUnion('type', [
  statusEvent,
  z.object({ type: z.literal('presence'), name: z.string(), status: statusEvent.shape.status }),
  z.object({ type: z.literal('looked'), name: z.string() }),
  z.object({ type: z.literal('activity'), name: z.string(), role: z.string(), task: z.number().nullable(), text: z.string() }),
  z.object({ type: z.literal('says'), name: z.string(), role: z.string(), task: z.number().nullable(), text: z.string() }),
  z.object({ type: z.literal('error'), name: z.string(), error: z.object({ code: z.string(), message: z.string(), stack: z.string().optional() }) }),
  z.object({ type: z.literal('exit'), name: z.string(), reason: z.string(), why: z.enum(EXIT_REASONS) }),
  /**
   * The teammate's run has ended while its thread runs on for others: it holds nothing more. `crashed`:
   * its run threw (the error came just before).
   */
  z.object({ type: z.literal('gone'), name: z.string(), crashed: z.boolean().optional() }),
  z.object({
    type: z.literal('usage'),
    name: z.string(),
    role: z.string(),
    model: z.string(),
    usage: z.object({ inputTokens: z.number(), outputTokens: z.number(), cacheReadTokens: z.number(), cacheWriteTokens: z.number() }),
  }),
  z.object({ type: z.literal('log'), name: z.string(), stream: z.enum(['stdout', 'stderr']), text: z.string() }),
]);

export type FromWorker = z.infer<typeof FromWorkerSchema>;

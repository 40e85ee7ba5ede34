import { z } from 'zod';

/** What the scale benchmark and its host processes (scale-host.ts) send each other. */

export const HostSpec = z.object({
  /** The board: a folder, or a postgres:// URL. */
  location: z.string(),
  /** The local folder (workspaces, crash logs). */
  rootDir: z.string(),
  team: z.array(z.object({ name: z.string(), role: z.string(), baseURL: z.string() })).min(1),
  /** The cores its manager shares out among threads (default: the machine's). */
  cores: z.number().int().positive().optional(),
});
export type HostSpec = z.infer<typeof HostSpec>;

export const ToHost = z.discriminatedUnion('type', [z.object({ type: z.literal('measure'), ms: z.number().int().positive() }), z.object({ type: z.literal('stop') })]);
export type ToHost = z.infer<typeof ToHost>;

export const FromHost = z.discriminatedUnion('type', [
  z.object({ type: z.literal('status'), name: z.string(), status: z.string() }),
  // cpuMs: over the window asked for; totalCpuMs and waitMs (its threads' time ready but not on a core, null off Linux): since the process started, at the window's end.
  z.object({ type: z.literal('measured'), cpuMs: z.number(), totalCpuMs: z.number(), waitMs: z.number().nullable(), rss: z.number(), bareRss: z.number() }),
  z.object({ type: z.literal('log'), text: z.string() }),
]);
export type FromHost = z.infer<typeof FromHost>;

/**
 * A full garbage collection of the thread's heap once it settles into idle after work, after letting
 * go of what the thread holds only while it works: its process launcher (core/exec/launcher.ts). V8 collects
 * when the heap grows, not when a thread falls quiet, so an idle teammate would otherwise hold the
 * garbage of its last task (about 5 MB a teammate, measured by the scale benchmark) until the next.
 * When what survives is spread thin over the old generation's pages — a teammate that worked many
 * tasks, 15 MB live over 39 MB of pages in the bench — a second, compacting collection gives those
 * pages back (scale bench, 16 pipelines on 3 teammates: 43 → 32 MB per idle teammate).
 *
 * This collection stands in for V8's memory reducer, which teammate threads start without
 * (manager.ts): the reducer would collect again some 8 s into idle, two or three times, costing CPU
 * when the teammate has nothing to do.
 */
import v8 from 'node:v8';
import vm from 'node:vm';
import { stopLauncher } from '../core/exec/launcher.js';

/** How long idle must last before the collection: a teammate that picks up the next task at once skips it. */
export const IDLE_COLLECT_MS = 1_000;

/**
 * Free space in the old generation's pages after a collection that is worth compacting for: more
 * than this many bytes and more than this share of those pages. Compacting costs a few times a plain
 * collection (100–200 ms against 30–70 in a teammate thread), so it runs only where it pays.
 */
export const COMPACT_SLACK = { bytes: 4 * 1024 * 1024, share: 0.25 } as const;

/** The old generation's pages, and what is live in them. */
export function oldSpace(): { size: number; used: number } {
  const space = v8.getHeapSpaceStatistics().find((entry) => entry.space_name === 'old_space');
  return { size: space?.space_size ?? 0, used: space?.space_used_size ?? 0 };
}

function worthCompacting({ size, used }: { size: number; used: number }): boolean {
  const slack = size - used;
  return slack > COMPACT_SLACK.bytes && slack > size * COMPACT_SLACK.share;
}

/**
 * This isolate's collector: `gc()`, then a compacting one if the old generation is left sparse. The
 * flags are set only for a moment: `--expose-gc` while a new context is made, so no other code (and
 * no context made later) sees a `gc` global; `--compact-on-every-full-gc` for the one collection.
 * V8's flags are the process's, so a full collection another thread happens to make in that moment
 * compacts too: it takes longer, and changes nothing else. Null where V8 refuses the flag.
 */
export function isolateCollector(): (() => void) | null {
  let gc: unknown;
  try {
    v8.setFlagsFromString('--expose-gc');
    gc = vm.runInNewContext('gc');
  } catch {
    return null;
  } finally {
    v8.setFlagsFromString('--no-expose-gc');
  }
  if (typeof gc !== 'function') return null;
  const collect = gc as () => void;
  return () => {
    collect();
    if (!worthCompacting(oldSpace())) return;
    v8.setFlagsFromString('--compact-on-every-full-gc');
    try {
      collect();
    } finally {
      v8.setFlagsFromString('--no-compact-on-every-full-gc');
    }
  };
}

export class IdleCollector {
  private timer: NodeJS.Timeout | null = null;
  private worked = false;
  /** How many collections ran (for the tests). */
  collections = 0;

  constructor(
    private readonly collect: (() => void) | null = isolateCollector(),
    private readonly delayMs = IDLE_COLLECT_MS,
    /** What the thread holds only while it works, let go first: its process launcher, made again on its next run. */
    private readonly release: () => void = stopLauncher,
  ) {}

  /** The last status of each teammate of the thread. */
  private readonly seats = new Map<string, string>();

  /**
   * Told every status each teammate of the thread takes. The thread is idle, and collected, once it
   * has worked and every teammate it still runs is idle.
   */
  status(status: string, seat = ''): void {
    this.seats.set(seat, status);
    this.settle();
  }

  /** A teammate of the thread that has left: the others decide alone. */
  leave(seat: string): void {
    if (this.seats.delete(seat)) this.settle();
  }

  private settle(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const statuses = [...this.seats.values()];
    if (statuses.some((status) => status === 'working' || status === 'waiting')) this.worked = true;
    if (!statuses.length || statuses.some((status) => status !== 'idle') || !this.worked) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.worked = false;
      this.release();
      if (!this.collect) return;
      this.collect();
      this.collections += 1;
    }, this.delayMs);
    this.timer.unref();
  }

  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}

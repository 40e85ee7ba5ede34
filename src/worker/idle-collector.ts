/**
 * A full garbage collection of the thread's heap once it settles into idle after work. V8 collects
 * when the heap grows, not when a thread falls quiet, so an idle teammate would otherwise hold the
 * garbage of its last task (about 5 MB a teammate, measured by the scale benchmark) until the next.
 */
import v8 from 'node:v8';
import vm from 'node:vm';

/** How long idle must last before the collection: a teammate that picks up the next task at once skips it. */
export const IDLE_COLLECT_MS = 1_000;

/**
 * This isolate's `gc()`. The flag is set only for the moment a new context is made, so no other code
 * (and no context made later) sees a `gc` global. Null where V8 refuses the flag.
 */
export function isolateCollector(): (() => void) | null {
  try {
    v8.setFlagsFromString('--expose-gc');
    const gc: unknown = vm.runInNewContext('gc');
    return typeof gc === 'function' ? (gc as () => void) : null;
  } catch {
    return null;
  } finally {
    v8.setFlagsFromString('--no-expose-gc');
  }
}

export class IdleCollector {
  private timer: NodeJS.Timeout | null = null;
  private worked = false;
  /** How many collections ran (for the tests). */
  collections = 0;

  constructor(
    private readonly collect: (() => void) | null = isolateCollector(),
    private readonly delayMs = IDLE_COLLECT_MS,
  ) {}

  /** Told every status the teammate takes. */
  status(status: string): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (status === 'working' || status === 'waiting') this.worked = true;
    if (status !== 'idle' || !this.worked || !this.collect) return;
    const collect = this.collect;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.worked = false;
      collect();
      this.collections += 1;
    }, this.delayMs);
    this.timer.unref();
  }

  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}

import type { TaskUsage } from './schemas.js';

/**
 * The model calls a board was told of (`recordUsage`) and has not written yet, per task. The task's
 * next write through that board carries them — a tool's record, the lease's renewal (every third of
 * a lease at the latest), the claim's end — so a model call costs no task write of its own.
 */
export class UnwrittenUsage {
  private readonly byTask = new Map<number, TaskUsage>();

  add(id: number, delta: { inputTokens: number; outputTokens: number }): void {
    this.giveBack(id, { calls: 1, inputTokens: delta.inputTokens, outputTokens: delta.outputTokens });
  }

  /** What task `id` has spent that is not on the board yet (zero when nothing). */
  of(id: number): TaskUsage {
    return this.byTask.get(id) ?? NO_USAGE;
  }

  /** All task `id` has unwritten, for a write to carry (null: nothing); no longer counted here. */
  take(id: number): TaskUsage | null {
    const usage = this.byTask.get(id) ?? null;
    this.byTask.delete(id);
    return usage;
  }

  /** Counted (again): what a write took and did not land, or a call just made. */
  giveBack(id: number, usage: TaskUsage): void {
    this.byTask.set(id, addTaskUsage(this.of(id), usage));
  }

  drop(id: number): void {
    this.byTask.delete(id);
  }
}

export const NO_USAGE: TaskUsage = { calls: 0, inputTokens: 0, outputTokens: 0 };

export function addTaskUsage(a: TaskUsage, b: TaskUsage): TaskUsage {
  return { calls: a.calls + b.calls, inputTokens: a.inputTokens + b.inputTokens, outputTokens: a.outputTokens + b.outputTokens };
}

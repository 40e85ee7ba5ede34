import type { Task } from './schemas.js';
import type { Fence } from './task-types.js';

/** A change a board refuses to write: the reason, and whether the caller's claim was superseded. */
export class Refusal {
  constructor(
    readonly reason: string,
    readonly fenced = false,
  ) {}
}

/** Why a write under `fence` may not change `task` (its claim is not current), or null. */
export function fenceRefusal(task: Task, fence: Fence): Refusal | null {
  if (task.status !== 'in_progress') {
    return new Refusal(`task #${task.id} is ${task.status}, not in progress`, true);
  }
  if (task.owner !== fence.owner) {
    return new Refusal(`task #${task.id} is owned by ${task.owner ?? 'nobody'}, not ${fence.owner}`, true);
  }
  if (fence.token !== undefined && task.claims !== fence.token) {
    return new Refusal(`task #${task.id}: claim token ${fence.token} was superseded by token ${task.claims} (lease taken over)`, true);
  }
  return null;
}

/** The role of a teammate that works every stage's tasks (and general ones). */
export const ANY_ROLE = 'any';

/**
 * Why `task` may not be claimed now by a teammate of `role` (undefined or ANY_ROLE: any role), or
 * null when it may. `lookup` finds a blocker. Every backend's claim and scan apply this one rule (PostgreSQL's
 * claim statement is the same rule in SQL: pg/task-sql.ts).
 */
export function whyNotClaimable(task: Task, role: string | undefined, nowMs: number, lookup: (id: number) => Task | undefined): string | null {
  if (role !== undefined && role !== ANY_ROLE && task.role !== null && task.role !== role) {
    return `task #${task.id} is for role ${task.role}, not ${role}`;
  }
  if (task.notBefore && Date.parse(task.notBefore) > nowMs) {
    // Before any attempt, a task waits only for its TaskCreated hooks (Pipeline.held).
    return task.attempts === 0 ? `task #${task.id} is held until its TaskCreated hooks decide (${task.notBefore} at the latest)` : `task #${task.id} is backing off until ${task.notBefore}`;
  }
  if (task.status === 'in_progress') {
    // No lease (a hand edit, an old file) counts as expired: nothing would ever renew it.
    const until = task.lease ? Date.parse(task.lease.until) : Number.NaN;
    const expired = Number.isNaN(until) || until < nowMs;
    if (!expired) return `task #${task.id} is already claimed by ${task.owner}`;
  } else if (task.status !== 'pending') {
    return `task #${task.id} is ${task.status}`;
  } else if (task.owner !== null) {
    return `task #${task.id} is already owned by ${task.owner}`;
  }
  for (const blocker of task.blockedBy) {
    const other = lookup(blocker);
    if (other?.status !== 'completed') return `task #${task.id} is blocked by #${blocker}`;
  }
  return null;
}

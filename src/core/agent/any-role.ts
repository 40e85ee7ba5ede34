import { ANY_ROLE } from '../board/task-checks.js';
import type { TaskBoardLike } from '../board/task-rules.js';
import type { ClaimResult } from '../board/task-types.js';
import { goneReason, HOST, type LeadLease, type LeadRecord } from '../board/liveness.js';
import { runsNow, type TeamRegistry } from '../board/team-registry.js';

/**
 * How long a task of a role whose only members are the live lead's resting teammates (they shut down
 * when idle, and the lead starts them again when work of their role comes) is left to them before a
 * member of role `any` takes it: one the person shut down for good is never started again.
 */
export const RESTING_GRACE_MS = 10_000;

/**
 * The claim of a teammate of role `any`: the oldest claimable task of a role that no other member of
 * the team works, or of no role. It fills in for a role the team lacks (an analyst, a generalist and
 * a reviewer: the generalist engineers) and never races a specialist for its work — the one that has
 * just submitted would otherwise be first to claim its own review. A specialist is a live member of
 * the registry, or for RESTING_GRACE_MS a teammate of the live lead that idled out. When the last
 * member of a role leaves, its exit wakes the idle teammates, and the generalist takes the role's
 * tasks from then on.
 */
export async function claimAsAny(board: TaskBoardLike, registry: TeamRegistry, name: string, leader: LeadRecord | null, nowMs = Date.now()): Promise<ClaimResult | null> {
  const lead = leader && goneReason(leader, nowMs) === null ? leader : null;
  const live = new Set<string>();
  const resting = new Set<string>();
  for (const member of registry.read().members) {
    if (member.name === name || member.role === ANY_ROLE) continue;
    if (runsNow(member, nowMs)) live.add(member.role);
    else if (lead && member.status === 'shutdown' && member.pid === lead.pid && (member.host ?? HOST) === lead.host) resting.add(member.role);
  }
  for (const task of board.scanUnclaimed(ANY_ROLE)) {
    if (task.role !== null && live.has(task.role)) continue;
    if (task.role !== null && resting.has(task.role) && nowMs - Date.parse(task.updatedAt) < RESTING_GRACE_MS) continue;
    const claim = await board.claim(task.id, name, { role: ANY_ROLE, tryOnce: true });
    if (claim.ok) return claim;
  }
  return null;
}

/** A teammate's next claim: the oldest task of its role (claimNext), or for role `any`, claimAsAny's. */
export function claimNextAs(name: string, role: string, board: TaskBoardLike, registry: TeamRegistry, lease: LeadLease): Promise<ClaimResult | null> {
  return role === ANY_ROLE ? claimAsAny(board, registry, name, lease.read()) : board.claimNext(name, role);
}

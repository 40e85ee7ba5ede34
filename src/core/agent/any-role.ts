import { ANY_ROLE } from '../board/task-checks.js';
import type { TaskBoardLike } from '../board/task-rules.js';
import type { ClaimResult } from '../board/task-types.js';
import { goneReason } from '../board/liveness.js';
import { isLive, type TeamRegistry } from '../board/team-registry.js';

/**
 * The claim of a teammate of role `any`: the oldest claimable task of a role that no other live
 * member of the team has, or of no role. It fills in for a role the team lacks (an analyst, a
 * generalist and a reviewer: the generalist engineers) and never races a specialist for its work —
 * the one that has just submitted would otherwise be first to claim its own review. When the last
 * member of a role leaves, its exit wakes the idle teammates, and the generalist takes the role's
 * tasks from then on.
 */
export async function claimAsAny(board: TaskBoardLike, registry: TeamRegistry, name: string, nowMs = Date.now()): Promise<ClaimResult | null> {
  const covered = new Set(
    registry
      .read()
      .members.filter((member) => member.name !== name && member.role !== ANY_ROLE && isLive(member) && goneReason(member, nowMs) === null)
      .map((member) => member.role),
  );
  for (const task of board.scanUnclaimed(ANY_ROLE)) {
    if (task.role !== null && covered.has(task.role)) continue;
    const claim = await board.claim(task.id, name, { role: ANY_ROLE, tryOnce: true });
    if (claim.ok) return claim;
  }
  return null;
}

import type { Heartbeat } from '../board/liveness.js';
import type { MemberState, Task } from '../board/schemas.js';
import { ANY_ROLE } from '../board/task-checks.js';
import { roleCovered } from '../board/team-registry.js';
import type { LeaderView } from './lead-api.js';

type Listed = { role: string; status: MemberState; resting?: boolean } & Heartbeat;

/**
 * What a person who just posted `task` from the web board or an MCP client is told when no teammate
 * will take it: the task waits, and what would take it. Null when a teammate of its role (or of role
 * any) runs on the board; when the lead of this process rests one (it starts it again for the task);
 * when the lead is another process's (its own screen says it, knowing its resting teammates, which
 * this one's view of the team does not); and for a task of no role.
 */
export function waitsForRole(task: Pick<Task, 'id' | 'pipeline' | 'stage' | 'role'>, members: readonly Listed[], leader: LeaderView, nowMs = Date.now()): string | null {
  const role = task.role;
  if (!role || leader.state === 'elsewhere' || roleCovered(members, role, nowMs)) return null;
  if (leader.state === 'here' && members.some((member) => member.resting === true && (member.role === role || member.role === ANY_ROLE))) return null;
  const what = task.pipeline === null ? `task #${task.id} waits: it` : `pipeline #${task.pipeline} waits: task #${task.id} (${task.stage})`;
  const takes = leader.state === 'here' ? `autoteam worker --role ${role} on this board, or /spawn <name> ${role} where the lead has a terminal, takes it` : `autoteam worker --role ${role} on this board takes it, or a lead (autoteam) with its team`;
  return `${what} is for a teammate of role ${role}, and none runs: ${takes}`;
}

import { type Heartbeat, HOST } from '../board/liveness.js';
import type { MemberState, Task } from '../board/schemas.js';
import { ANY_ROLE } from '../board/task-checks.js';
import { roleCovered } from '../board/team-registry.js';
import type { LeaderView } from './lead-api.js';

type Listed = { role: string; status: MemberState; pid?: number | null; host?: string | null; resting?: boolean } & Heartbeat;

/**
 * Whether some teammate takes `role`'s tasks: a live member of the role (or of role any), or one of
 * the lead's own team, resting or not — the lead starts a resting one again when work of its role
 * comes (`resting` where the lead's own snapshot says so; its pid where another process reads the team).
 */
export function takenBeside(members: readonly Listed[], leader: LeaderView, nowMs = Date.now()): (role: string) => boolean {
  const leads = (member: Listed) => member.resting === true || (leader.state !== 'none' && member.pid === leader.pid && (member.host ?? HOST) === leader.host);
  return (role) => roleCovered(members, role, nowMs) || members.some((member) => (member.role === role || member.role === ANY_ROLE) && leads(member));
}

/**
 * What a person who just posted `task` from the web board or an MCP client is told when no teammate
 * takes its role (a lead started with --no-team, a team sized without it): the task waits, and who
 * would take it. Null when one does, or the task has no role.
 */
export function waitsForRole(task: Pick<Task, 'id' | 'pipeline' | 'stage' | 'role'>, members: readonly Listed[], leader: LeaderView, nowMs = Date.now()): string | null {
  const role = task.role;
  if (!role || takenBeside(members, leader, nowMs)(role)) return null;
  const what = task.pipeline === null ? `task #${task.id} waits: it` : `pipeline #${task.pipeline} waits: task #${task.id} (${task.stage})`;
  return `${what} is for a teammate of role ${role}, and none runs on this board: /spawn <name> ${role} in the lead's terminal, or autoteam worker --role ${role}, takes it`;
}

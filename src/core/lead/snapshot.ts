import { HOST } from '../board/liveness.js';
import type { ProtocolRequest } from '../board/requests.js';
import type { Task, TeamConfig } from '../board/schemas.js';
import type { BoardProblem } from '../board/task-index.js';
import { taskWorkspace } from '../stages/pipeline.js';
import { pipelineStatus, pipelineUsage, tasksByPipeline } from '../stages/pipeline-status.js';
import type { LeaderView, LeadSnapshot, MemberView, PipelineView, ShownMember } from './lead-api.js';
import type { PendingQuestion } from './questions.js';
import type { Spend } from './spend.js';
import type { TeamModels } from './team-models.js';

/** What the session reads a snapshot from, each read once. */
export interface SnapshotParts {
  board: Omit<LeadSnapshot['board'], 'problems'>;
  tasks: Task[];
  problems: BoardProblem[];
  team: TeamConfig;
  /** Teammates this process runs that the registry does not list yet as they are (see LeadTeam.starting). */
  starting?: ShownMember[];
  questions: PendingQuestion[];
  plans: ProtocolRequest[];
  spend: Pick<Spend, 'of' | 'total' | 'byMember'>;
  models: Pick<TeamModels, 'label' | 'ids' | 'offline' | 'fallback' | 'of' | 'costOf'>;
  roles: Array<{ role: string; model: string }>;
  running: (name: string) => boolean;
  /** This session's teammates that left on their idle timeout and come back for work (LeadTeam.isResting). */
  resting?: (name: string) => boolean;
  /** The lead of another process (a web board or MCP server of its own): its teammates shut down are still its team, resting or kept down. */
  leader?: LeaderView;
  autoAnswer: boolean;
}

/** The session's state as plain data (see LeadSnapshot): derived here, so every front end shows the same. */
export function buildSnapshot(parts: SnapshotParts): LeadSnapshot {
  const { tasks, spend, models } = parts;
  // Grouped once: a board of thousands of pipelines is not scanned once per pipeline.
  const pipelines: PipelineView[] = [...tasksByPipeline(tasks)].map(([id, own]) => {
    const status = pipelineStatus(own);
    return { id, status, usage: pipelineUsage(own), cost: models.costOf(own), workspace: taskWorkspace(parts.board.rootDir, own[0] ?? { pipeline: id, artifacts: {} }) };
  });
  // A teammate starting is shown where the registry has it (a record of an earlier run), or after the rest.
  const starting = new Map((parts.starting ?? []).map((member) => [member.name, member]));
  // Members that left before this process began (an earlier session's teammates, a worker stopped
  // yesterday) are the team's past: the panels and /team show who is there, and who left since.
  // One found dead now may have died long before: its last heartbeat says when it was last there.
  // But a live lead's teammates that shut down, resting on their idle timeout or kept down, are that
  // lead's team now (a web board of its own beside a lead listed none a minute after the lead started).
  const left = (member: ShownMember) => Date.parse(member.status === 'dead' ? (member.heartbeat ?? member.since) : member.since);
  const leader = parts.leader?.state === 'elsewhere' ? parts.leader : null;
  const leads = (member: ShownMember) => leader !== null && member.status === 'shutdown' && member.pid === leader.pid && (member.host ?? HOST) === leader.host;
  const current = parts.team.members.filter((member) => (member.status !== 'shutdown' && member.status !== 'dead') || left(member) >= performance.timeOrigin || leads(member));
  const listed: ShownMember[] = current.map((member) => starting.get(member.name) ?? member);
  for (const { name } of current) starting.delete(name);
  const members: MemberView[] = [...listed, ...starting.values()].map((member) => ({ ...member, ...(member.status === 'shutdown' && parts.resting?.(member.name) ? { resting: true } : {}), running: parts.running(member.name), model: models.of(member.role, false), spend: spend.of(member.name) }));
  return {
    board: { ...parts.board, problems: parts.problems.map((problem) => problem.message) },
    tasks,
    pipelines,
    team: { name: parts.team.team, lead: parts.team.lead, members },
    questions: parts.questions,
    plans: parts.plans,
    spend: { total: spend.total(), members: spend.byMember() },
    models: { label: models.label, ids: models.ids, offline: models.offline, roles: parts.roles, others: models.fallback },
    autoAnswer: parts.autoAnswer,
  };
}

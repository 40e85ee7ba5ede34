import { goneReason } from '../core/board/liveness.js';
import type { Task } from '../core/board/schemas.js';
import { committedNothing } from '../core/board/artifacts.js';
import { isLive } from '../core/board/team-registry.js';
import type { TeamEvent } from '../core/events/schema.js';
import type { LeadControls, LeadSnapshot } from '../core/lead/lead-api.js';

/**
 * What the web page reads, shaped from a LeadControls' snapshot and the board's log: small cards for
 * the board (a task file holds its whole history; 10,000 of them would not fit a page), the team with
 * each member's heartbeat and liveness, and one pipeline's evidence. Plain data, sent as JSON.
 */

export interface Card {
  id: number;
  subject: string;
  status: Task['status'];
  stage: string | null;
  revision: number;
  owner: string | null;
  role: string | null;
  pipeline: number | null;
  createdAt: string;
  updatedAt: string;
  /** When its last step was taken (a claim, a tool's record, its end): what its age counts from, not a lease's renewal, which moves updatedAt every few seconds. */
  since: string;
  /** Why a failed or cancelled task ended (cut), else null. */
  result: string | null;
}

export function cardOf(task: Task): Card {
  return {
    id: task.id,
    subject: task.subject,
    status: task.status,
    stage: task.stage,
    revision: task.revision,
    owner: task.owner,
    role: task.role,
    pipeline: task.pipeline,
    createdAt: task.createdAt,
    updatedAt: task.updatedAt,
    since: task.history.at(-1)?.at ?? task.updatedAt,
    result: task.status === 'failed' || task.status === 'cancelled' ? (task.result ?? '').slice(0, 300) || null : null,
  };
}

/** Everything but the cards: what the header, the team page and the side panels show. */
export function stateOf(snapshot: LeadSnapshot, controls: LeadControls, outage: { since: string; message: string } | null, nowMs = Date.now()) {
  const members = snapshot.team.members.map((member) => {
    const beat = member.heartbeat ? Date.parse(member.heartbeat) : Date.parse(member.since);
    const gone = isLive(member) ? goneReason({ pid: member.pid, host: member.host, heartbeat: member.heartbeat }, nowMs) : null;
    return {
      name: member.name,
      role: member.role,
      model: member.model,
      // As the REPL's /team says it: a teammate this session starts again for work is resting, not shut down.
      status: member.status === 'shutdown' && member.resting ? 'resting' : member.status,
      task: member.task,
      host: member.host ?? null,
      heartbeatAgeMs: Number.isFinite(beat) ? Math.max(0, nowMs - beat) : null,
      // A record that says running but whose heartbeat went quiet: dead (the lead's reaper will say so).
      alive: isLive(member) && gone === null,
      gone,
      reason: member.reason ?? null,
      running: member.running,
      spend: member.spend,
    };
  });
  return {
    board: snapshot.board,
    leader: controls.leader(),
    outage,
    team: { name: snapshot.team.name, lead: snapshot.team.lead, members },
    questions: snapshot.questions,
    plans: snapshot.plans.map((plan) => ({ id: plan.id, from: plan.from, plan: 'plan' in plan ? String(plan.plan) : '', createdAt: plan.createdAt })),
    spend: snapshot.spend,
    models: snapshot.models,
    counts: countBy(snapshot.tasks.map((task) => task.status)),
  };
}

export type WebState = ReturnType<typeof stateOf>;

/** One pipeline as its page shows it: the requirement, Q&A, criteria with evidence, reviews, cost per role, timeline. */
export async function pipelineView(controls: LeadControls, id: number) {
  const state = controls.stateOf(id);
  if (state.tasks.length === 0) return null;
  const tasks = state.tasks;
  const last = tasks.at(-1)!;
  const first = tasks[0]!;
  const data = [...tasks].reverse().find((task) => (task.artifacts.criteria ?? []).length > 0) ?? last;
  const reviews = tasks.filter((task) => task.stage === 'review');
  const approval = [...reviews].reverse().find((task) => task.artifacts.verdict === 'approved');
  const verdicts = new Map((approval?.artifacts.criteriaVerdicts ?? []).map((verdict) => [verdict.id, verdict]));
  const events = await controls.events({ pipeline: id }, 2_000);
  return {
    id,
    status: state.status,
    reason: state.reason ?? null,
    revisions: state.revisions,
    requirement: first.artifacts.requirement ?? first.description ?? first.subject,
    summary: data.artifacts.summary ?? null,
    requirements: data.artifacts.requirements ?? {},
    qa: data.artifacts.qa ?? [],
    criteria: (data.artifacts.criteria ?? []).map((criterion) => ({ ...criterion, verdict: verdicts.get(criterion.id) ?? null })),
    reviews: reviews.map((task) => ({
      task: task.id,
      revision: task.revision,
      status: task.status,
      verdict: task.artifacts.verdict ?? null,
      comment: task.artifacts.comment ?? null,
      issues: task.artifacts.issues ?? [],
      checks: (task.artifacts.checks ?? []).map((check) => ({ id: check.id, language: check.language, code: check.code, ok: check.ok, exitCode: check.exitCode, output: check.output, sha256: check.sha256 })),
      reports: (['lint', 'tests', 'complexity'] as const).flatMap((kind) => {
        const report = task.artifacts[kind];
        return report ? [{ kind, ok: report.ok ?? null, file: report.file, sha256: report.sha256 ?? null }] : [];
      }),
    })),
    usage: usageByRole(tasks, events),
    tasks: tasks.map(cardOf),
    timeline: events.filter((event) => event.type !== 'model_call' || event.text || event.purpose === 'compaction').slice(-400).map(timelineEntry),
    repository: tasks.some((task) => task.artifacts.git !== undefined),
    branch: branchOf(tasks),
  };
}

/** The pipeline's branch: its name, base, approved commit, and whether it was merged or discarded (then there is nothing to merge). */
function branchOf(tasks: readonly Task[]) {
  const git = tasks.findLast((task) => task.artifacts.git?.commit)?.artifacts.git ?? tasks.findLast((task) => task.artifacts.git)?.artifacts.git;
  if (!git) return null;
  const outcome = tasks.findLast((task) => task.artifacts.outcome)?.artifacts.outcome ?? null;
  return {
    name: git.branch,
    base: git.base,
    commit: git.commit ?? null,
    committedNothing: committedNothing(git),
    remote: git.remote ?? null,
    outcome: outcome ? { action: outcome.action, into: outcome.into ?? null, commit: outcome.commit ?? null, noChange: outcome.noChange ?? false } : null,
  };
}

/** Tokens per role from the tasks (what the budgets count), dollars from the log's model calls. */
function usageByRole(tasks: readonly Task[], events: readonly TeamEvent[]) {
  const roles = new Map<string, { role: string; calls: number; inputTokens: number; outputTokens: number; cost: number | null }>();
  const entry = (role: string) => {
    const known = roles.get(role) ?? { role, calls: 0, inputTokens: 0, outputTokens: 0, cost: 0 };
    roles.set(role, known);
    return known;
  };
  for (const task of tasks) {
    const row = entry(task.role ?? 'general');
    row.calls += task.usage.calls;
    row.inputTokens += task.usage.inputTokens;
    row.outputTokens += task.usage.outputTokens;
  }
  for (const event of events) {
    if (event.type !== 'model_call') continue;
    const row = entry(event.role ?? 'general');
    row.cost = row.cost === null || event.costUsd === null ? null : row.cost + event.costUsd;
  }
  return [...roles.values()];
}

/** One line of a timeline: when, who, what (the event's own fields, without the model's text). */
export function timelineEntry(event: TeamEvent) {
  const { seq, ts, type, agent, task, pipeline } = event;
  return { seq: seq ?? null, ts, type, agent: agent ?? null, task: task ?? null, pipeline: pipeline ?? null, text: describe(event) };
}

function describe(event: TeamEvent): string {
  switch (event.type) {
    case 'task_posted':
      return `posted #${event.task} ${event.stage ?? 'task'}${event.revision ? ` r${event.revision}` : ''}: ${event.subject}`;
    case 'task_claimed':
      return `claimed #${event.task}${event.takeover ? ' (taken over)' : ''}`;
    case 'task_released':
      return `released #${event.task} (${event.kind}): ${event.detail}`;
    case 'task_completed':
      return `completed #${event.task}${event.signal ? ` with ${event.signal}` : ''}${event.next ? ` → #${event.next}` : ''}`;
    case 'task_failed':
      return `failed #${event.task}: ${event.reason}`;
    case 'task_cancelled':
      return `cancelled #${event.task}: ${event.reason}`;
    case 'task_retried':
      return `retried → #${event.newTask}`;
    case 'model_call':
      if (event.purpose === 'compaction') return `compacted its conversation (${event.inputTokens} tokens summarised)`;
      return event.text ? `says: ${event.text.slice(0, 300)}` : `model call (${event.model})`;
    case 'tool_call':
      return `${event.tool} ${event.outcome}: ${event.summary}`;
    case 'question_asked':
      return `asks: ${event.question}`;
    case 'question_answered':
      return `answered by ${event.by}: ${event.answer}`;
    case 'question_withdrawn':
      return `question withdrawn: ${event.reason}`;
    case 'criterion_added':
      return `${event.id}: ${event.criterion}`;
    case 'check_ran':
      return `${event.id} (${event.language}) ${event.ok ? 'passed' : `failed, exit ${event.exitCode}`}`;
    case 'review_verdict':
      return `r${event.revision} ${event.verdict}${event.issues.length ? `: ${event.issues.map((issue) => `[${issue.severity}] ${issue.text}`).join('; ')}` : ''}`;
    case 'pipeline_status':
      return `pipeline ${event.status}${event.reason ? `: ${event.reason}` : ''}`;
    case 'teammate_exited':
      return `${event.kind} (${event.why}): ${event.reason}`;
    case 'teammate_dead':
      return `dead: ${event.reason}`;
    case 'teammate_idle':
      return `idle${event.reason ? `: ${event.reason}` : ''}`;
    case 'teammate_spawned':
      return `started${event.model ? ` on ${event.model}` : ''}`;
    case 'teammate_woke':
      return 'woke';
    case 'note':
      return event.text;
    case 'mcp_server':
      return `MCP server ${event.server} ${event.state}${event.detail ? `: ${event.detail}` : ''}`;
    case 'repository_instructions':
      return `read the repository's instructions: ${event.files.map((file) => `${file.path}${file.kept < file.bytes ? ` (${file.kept} of ${file.bytes} bytes)` : ''}`).join(', ')}`;
    case 'board_outage':
      return `board ${event.state}: ${event.message}`;
    case 'hook_decision':
      return `hook ${event.hook} ${event.decision}${event.reason ? `: ${event.reason}` : ''}`;
    case 'merge_step':
      return `merge queue: ${event.step.replace('_', ' ')} (${event.branch} into ${event.into}): ${event.detail}`;
  }
}

function countBy(values: readonly string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const value of values) counts[value] = (counts[value] ?? 0) + 1;
  return counts;
}

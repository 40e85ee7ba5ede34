import fs from 'node:fs';
import path from 'node:path';
import type { Task, TaskUsage } from '../core/board/schemas.js';
import { committedNothing } from '../core/board/artifacts.js';
import { costWith, type ModelSpec } from '../core/model/factory.js';
import { formatCost, type PriceTable } from '../core/model/pricing.js';
import type { LeadApi, LeadSnapshot } from '../core/lead/session.js';
import type { PipelineState } from '../core/stages/pipeline.js';
import { approvalOf } from '../core/stages/pipeline-status.js';
import type { TraceSummary } from '../core/trace/summary.js';
import { formatDuration, formatTaskLine, formatUsage } from '../frontend/format.js';
import { counted } from '../core/words.js';

/** What `autoteam run` reports of each pipeline it worked: as text, or as JSON (one object each). */

/** An MCP server that failed, exited or is gone during a run: its last state, per server and teammate. */
export interface McpTrouble {
  server: string;
  agent: string | null;
  state: string;
  detail: string;
}

export interface RunSummary {
  pipeline: number;
  status: string;
  reason?: string;
  requirement: string;
  model: string;
  tasks: Array<{ id: number; stage: string | null; revision: number; owner: string | null; status: string; result: string | null }>;
  requirements: number;
  questions: number;
  files: string[];
  workspace: string;
  /** Repository mode: the pipeline's branch, the commit it started from, and the approval's commit. */
  git?: {
    repo: string;
    branch: string;
    base: string;
    commit: string | null;
    /** `repository.remote`: the remote the branch lives on (credentials redacted). */
    remote?: string;
    /** Merged by the merge queue (autoMerge) or by hand: into which branch, as which commit (`noChange`: its change was already there). */
    merged?: { into: string; commit: string; noChange?: true };
    /** Approved and not merged after the merge queue took it (autoMerge): why, as its last step said (it waits, or an error). */
    unmerged?: string;
  };
  revisions: number;
  /** MCP servers that failed, exited or are gone while this pipeline ran (absent when none did). */
  mcp?: McpTrouble[];
  /** The acceptance criteria and, once approved, the reviewer's verdict and evidence for each. */
  criteria: Array<{ id: string; criterion: string; verify: string; met: boolean | null; evidence: string | null }>;
  /** Checks the reviewers ran (run_check) over all reviews, and how many passed. */
  checks: { run: number; passed: number };
  /** Model calls and tokens of this pipeline (the budgets count these). */
  usage: TaskUsage;
  /** Times its tasks were tried again after an attempt an error ended (a model error after the provider's own retries, an unfinished turn). */
  retries: number;
  behaviour: TraceSummary['roles'];
  tokens: { input: number; output: number; cacheRead: number };
  /** Dollars at the model's list price (null: no known price, e.g. a local model or the offline one). */
  cost: number | null;
  wallMs: number;
}

export async function summarize(session: LeadApi, snapshot: LeadSnapshot, state: PipelineState, requirement: string, since: string, wallMs: number, recorded: ModelSpec, prices?: PriceTable): Promise<RunSummary> {
  // Only this pipeline's work: the team may also have picked up other open tasks on the board.
  const ids = new Set(state.tasks.map((task) => task.id));
  const trace = await session.workSummary(ids, since);
  // Requirements and Q&A are carried from task to task: the most any task of the pipeline holds.
  const most = (count: (task: Task) => number) => Math.max(0, ...state.tasks.map(count));
  const files = new Set<string>();
  for (const task of state.tasks) for (const file of task.artifacts.files ?? []) files.add(file.path);
  const last = state.tasks.at(-1);
  // The task that approved the pipeline: its verdicts on the acceptance criteria, and the commit it made.
  const approval = approvalOf(state.tasks);
  const verdicts = approval?.artifacts.criteriaVerdicts ?? [];
  const checks = state.tasks.flatMap((task) => task.artifacts.checks ?? []);
  const git = approval?.artifacts.git ?? last?.artifacts.git;
  const outcome = state.tasks.find((task) => task.artifacts.outcome?.action === 'merged')?.artifacts.outcome;
  const merged = outcome?.into && outcome.commit ? { into: outcome.into, commit: outcome.commit, ...(outcome.noChange ? { noChange: true as const } : {}) } : null;
  const unmerged = state.status === 'approved' && git?.commit && !merged ? await mergeWait(session, state.id) : null;
  return {
    pipeline: state.id,
    status: state.status,
    ...(state.reason ? { reason: state.reason } : {}),
    requirement,
    model: session.modelIds,
    tasks: state.tasks.map((task) => ({ id: task.id, stage: task.stage, revision: task.revision, owner: task.owner, status: task.status, result: task.result })),
    requirements: most((task) => Object.keys(task.artifacts.requirements ?? {}).length),
    questions: most((task) => (task.artifacts.qa ?? []).length),
    files: [...files].sort(),
    workspace: path.resolve(snapshot.pipelines.find((view) => view.id === state.id)?.workspace ?? path.join(snapshot.board.rootDir, 'workspace', String(state.id))),
    ...(git ? { git: { repo: git.repo, branch: git.branch, base: git.base, commit: git.commit ?? null, ...(git.remote ? { remote: git.remote } : {}), ...(merged ? { merged } : {}), ...(unmerged ? { unmerged } : {}) } } : {}),
    revisions: state.revisions,
    criteria: (last?.artifacts.criteria ?? []).map((criterion) => {
      const verdict = verdicts.find((v) => v.id === criterion.id);
      return { ...criterion, met: verdict ? verdict.met : null, evidence: verdict?.evidence ?? null };
    }),
    checks: { run: checks.length, passed: checks.filter((check) => check.ok).length },
    usage: state.usage,
    retries: state.tasks.reduce((sum, task) => sum + task.attempts, 0),
    behaviour: trace.roles,
    tokens: { input: trace.inputTokens, output: trace.outputTokens, cacheRead: trace.cacheReadTokens },
    cost: costWith(recorded, { inputTokens: trace.inputTokens, outputTokens: trace.outputTokens, cacheReadTokens: trace.cacheReadTokens }, prices),
    wallMs,
  };
}

/** Why the merge queue left an approved pipeline unmerged, from its last step, when it took the pipeline and the step waits or failed. */
async function mergeWait(session: Pick<LeadApi, 'events'>, pipeline: number): Promise<string | null> {
  const last = (await session.events({ pipeline, types: ['merge_step'] })).at(-1);
  return last?.type === 'merge_step' && (last.step === 'waiting' || last.step === 'error') ? last.detail : null;
}

const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/** A pipeline's end as its summary opens: `pipeline #3: APPROVED`, `pipeline #3: LEFT OPEN — why`. */
export function endLine(pipeline: number, status: string, reason?: string): string {
  // A pipeline the run stopped before its end is still active on the board: left open, not failed.
  return `pipeline #${pipeline}: ${(status === 'active' ? 'left open' : status).toUpperCase()}${reason ? ` — ${reason}` : ''}`;
}

/**
 * `label`: the models as a person reads them (the summary's `model` is their ids); null under several
 * pipelines, whose overall line says it once.
 */
export function printSummary(summary: RunSummary, tasks: readonly Task[], label: string | null): void {
  console.log('');
  console.log(endLine(summary.pipeline, summary.status, summary.reason));
  // Under several pipelines, which requirement this one worked (the task lines cut their subjects).
  if (label === null) console.log(`  requirement: ${clip(summary.requirement.replace(/\s+/g, ' ').trim(), 110)}`);
  for (const task of tasks) console.log(`  ${formatTaskLine(task)}`);
  if (summary.behaviour.length) console.log('behaviour per role:');
  for (const role of summary.behaviour) {
    const tools = Object.entries(role.tools)
      .sort((a, b) => b[1] - a[1])
      .map(([name, count]) => `${name} ${count}`)
      .join(', ');
    console.log(`  ${role.role} (${role.agents.join(', ')}): ${role.modelCalls} model call${role.modelCalls === 1 ? '' : 's'}; ${tools || 'no tools'}`);
  }
  const merged = summary.git?.merged;
  // Merged, the files are on the base branch: the worktree that held them is gone. On a shared board
  // another folder (another machine) may have worked it: its folder is named only where it is.
  const filesAt = merged ? `merged into ${merged.into}` : fs.existsSync(summary.workspace) ? summary.workspace : `worked in another folder: ${summary.workspace} is not on this machine`;
  console.log(
    `requirements: ${summary.requirements} · questions answered: ${summary.questions} · files: ${summary.files.length ? `${summary.files.join(', ')} (${filesAt})` : 'none'} · revisions: ${summary.revisions}`,
  );
  if (summary.git) {
    const { branch, base, commit, remote } = summary.git;
    // On a remote the branch is there, pushed; merged, it is on the base branch.
    const where = merged
      ? ` · merged into ${merged.into} at ${merged.commit.slice(0, 12)}`
      : summary.git.unmerged
        ? ` · not merged: ${summary.git.unmerged} (autoteam merge --queue merges it then)`
        : remote
          ? ` on ${remote}`
          : ` (autoteam diff|merge|discard ${summary.pipeline})`;
    // Its change already on the base (another pipeline made the same one): no commit of its own merged.
    // Approved with no change against its base (a requirement run again): there was nothing to commit.
    const next = merged?.noChange
      ? ` · its change was already in ${merged.into} at ${merged.commit.slice(0, 12)}`
      : committedNothing({ base, commit })
        ? ` · nothing to commit: the base already holds the reviewed files${merged || remote ? '' : ` (autoteam merge|discard ${summary.pipeline} removes the worktree)`}`
        : commit
          ? ` · commit ${commit.slice(0, 12)}${where}`
          : ' · nothing committed';
    console.log(`branch: ${branch} from ${base.slice(0, 12)}${next}`);
  }
  if (summary.criteria.length) {
    console.log('acceptance criteria:');
    for (const c of summary.criteria) {
      const mark = c.met === true ? '✓' : c.met === false ? '✗' : '·';
      // A verdict is given with an approval: before one (failed, left open) the criterion has none.
      const evidence = c.evidence ? ` — ${clip(c.evidence, 60)}` : c.met === null ? ' — no verdict: not approved' : '';
      console.log(`  ${mark} [${c.id}] ${clip(c.criterion, 72)}${evidence}`);
    }
  }
  // Every review runs its own checks: the count is over all of them, which is said when there were several.
  const reviews = tasks.filter((task) => (task.artifacts.checks ?? []).length > 0).length;
  const checks = summary.checks.run === 0 ? 'none run' : `${summary.checks.passed}/${summary.checks.run} passed${reviews > 1 ? ` over ${reviews} reviews` : ''}`;
  // Requests that failed are no model calls: said beside them, so 0 calls is not read as 0 requests.
  const failed = summary.retries ? ` · its tasks tried again ${counted(summary.retries, 'time')} after errors` : '';
  console.log(`checks: ${checks} · pipeline #${summary.pipeline}: ${formatUsage(summary.usage)}${failed}`);
  console.log(
    `tokens: ${summary.tokens.input.toLocaleString('en-US')} in / ${summary.tokens.output.toLocaleString('en-US')} out${summary.tokens.cacheRead ? ` / ${summary.tokens.cacheRead.toLocaleString('en-US')} cached` : ''}${summary.cost !== null ? ` · ${formatCost(summary.cost)}` : ''} · wall time ${formatDuration(summary.wallMs)}${label === null ? '' : ` · ${label}`}`,
  );
}

/** The line under several pipelines' summaries: how many were approved, and what they cost together. */
export function printOverall(summaries: readonly RunSummary[], wallMs: number, label: string): void {
  const approved = summaries.filter((summary) => summary.status === 'approved').length;
  const sum = (pick: (summary: RunSummary) => number) => summaries.reduce((total, summary) => total + pick(summary), 0);
  const costs = summaries.map((summary) => summary.cost);
  const cost = costs.every((value) => value !== null) ? formatCost(sum((summary) => summary.cost ?? 0)) : null;
  console.log('');
  console.log(
    `overall: ${summaries.length} pipelines · ${approved} approved, ${summaries.length - approved} not · ${counted(sum((s) => s.usage.calls), 'model call')} · ` +
      `tokens ${sum((s) => s.tokens.input).toLocaleString('en-US')} in / ${sum((s) => s.tokens.output).toLocaleString('en-US')} out${cost ? ` · ${cost}` : ''} · wall time ${formatDuration(wallMs)} · ${label}`,
  );
}

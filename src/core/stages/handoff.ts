import type { Artifacts, Change, Criterion, GitInfo, Issue, QaEntry, Submitted } from '../board/artifacts.js';
import type { Stage, Task } from '../board/schemas.js';
import { cutText } from '../sizes.js';
import { stageOf } from './definitions.js';

/**
 * What one artifact may take of a handoff, in characters. A handoff is read by a model on every call
 * of the next stage: what is longer is cut with a note saying where the whole is (the task's
 * artifacts travel with it), so a large artifact never makes a request too large.
 */
const MAX_FILE_CHARS = 12_000;
const MAX_REQUIREMENT_CHARS = 40_000;
const MAX_DIFF_CHARS = 20_000;
const MAX_ENTRY_CHARS = 4_000;
const MAX_REPORT_CHARS = 8_000;

/** Characters of each part of a task's first message (subject, description, handoff): see taskPrompt. */
export const TASK_PROMPT_LIMITS = { subject: 1_000, description: 40_000, handoff: 60_000 } as const;

/** `value` cut to `max` characters, saying which artifact of this task holds the whole. */
function artifact(value: string, max: number, key: string): string {
  return cutText(value, max, `the whole is in this task's artifacts.${key}`);
}

/**
 * What one stage hands the next, as data. It is built from the task's artifacts only, rendered to
 * text in one place (`renderHandoff`), and given as it is to models that take structured context
 * (the offline model), so nothing has to parse the runtime's prose.
 */
export interface HandoffData {
  stage: Stage;
  revision: number;
  requirement: string;
  requirements: Record<string, string>;
  summary?: string;
  qa: QaEntry[];
  criteria: Criterion[];
  /** Implementation at revision ≥ 1: what the review asked for. */
  issues: Issue[];
  /** Review: what was submitted. */
  submitted?: Submitted;
  /** Review at revision ≥ 1: the previous review's issues, and the diff against that revision. */
  previousIssues: Issue[];
  diff?: string;
  /** Reports of earlier stages defined in autoteam.config.json. */
  reports?: Record<string, string>;
  /** Repository mode: the pipeline's branch, and (review) the change against its base commit. */
  git?: GitInfo;
  change?: Change;
}

export function handoffData(task: Pick<Task, 'stage' | 'revision' | 'description' | 'artifacts'>): HandoffData {
  const a: Artifacts = task.artifacts;
  return {
    stage: task.stage ?? 'requirements',
    revision: task.revision,
    requirement: a.requirement ?? task.description,
    requirements: a.requirements ?? {},
    ...(a.summary ? { summary: a.summary } : {}),
    qa: a.qa ?? [],
    criteria: a.criteria ?? [],
    issues: task.stage === 'implementation' ? (a.issues ?? []) : [],
    ...(a.submitted ? { submitted: a.submitted } : {}),
    previousIssues: a.previousIssues ?? [],
    ...(a.diff ? { diff: a.diff } : {}),
    ...(a.git ? { git: a.git } : {}),
    ...(a.reports ? { reports: a.reports } : {}),
    ...(a.change ? { change: a.change } : {}),
  };
}

export function formatCriterion(criterion: Criterion): string {
  return `- [${criterion.id}] ${criterion.criterion} (verify: ${criterion.verify})`;
}

export function formatIssue(issue: Issue): string {
  return `- [${issue.severity}] ${issue.text}${issue.criterion ? ` (${issue.criterion})` : ''}`;
}

function requirementsSection(data: HandoffData): string[] {
  const lines = [`Original requirement: ${artifact(data.requirement, MAX_REQUIREMENT_CHARS, 'requirement')}`];
  const entries = Object.entries(data.requirements);
  if (entries.length) lines.push('', 'Requirements (from the analyst):', ...entries.map(([key, value]) => artifact(`- ${key}: ${value}`, MAX_ENTRY_CHARS, `requirements.${key}`)));
  if (data.criteria.length) lines.push('', 'Acceptance criteria:', ...data.criteria.map((c) => artifact(formatCriterion(c), MAX_ENTRY_CHARS, 'criteria')));
  if (data.summary) lines.push('', `Analyst summary: ${artifact(data.summary, MAX_REPORT_CHARS, 'summary')}`);
  if (data.qa.length) lines.push('', 'Clarifications:', ...data.qa.flatMap((entry) => [artifact(`Q: ${entry.question}`, MAX_ENTRY_CHARS, 'qa'), artifact(`A: ${entry.answer}`, MAX_ENTRY_CHARS, 'qa')]));
  return lines;
}

/** The handoff text of a task: the one place the runtime turns stage data into prose. */
export function renderHandoff(data: HandoffData, fileContent?: string): string {
  const lines = requirementsSection(data);
  if (data.stage === 'requirements') return '';
  if (data.stage === 'implementation') {
    if (data.revision > 0) {
      lines.push(
        '',
        `This is revision ${data.revision}. The reviewer sent the work back with these issues:`,
        ...data.issues.map((issue) => artifact(formatIssue(issue), MAX_ENTRY_CHARS, 'issues')),
        '',
        'Your previous files are in the workspace. Fix every blocker and major issue, run the code again, then submit_for_review(file).',
      );
    } else {
      lines.push('', 'Implement it in the workspace, run it, then submit_for_review(file). Approval needs every acceptance criterion met, with evidence.');
    }
    if (data.git) {
      lines.push('', `The workspace is a git worktree of the person's repository on branch ${data.git.branch} (from ${data.git.base.slice(0, 12)}): change what the requirement needs and leave the rest as it is. The runtime commits on approval; .git is not yours to touch.`);
    }
    return lines.join('\n');
  }
  if (data.stage !== 'review') return customStageHandoff(data, lines);
  const submitted = data.submitted;
  if (submitted) {
    const shown = cutText(fileContent ?? '', MAX_FILE_CHARS, `the whole is in ${submitted.file} in the workspace`);
    const others = Object.keys(submitted.files ?? {}).filter((file) => file !== submitted.file);
    lines.push('', `Submitted file: ${submitted.file} (revision ${submitted.revision}, sha256 ${submitted.sha256.slice(0, 12)})`);
    if (others.length) lines.push(`Other files in the workspace: ${others.join(', ')}`);
    lines.push('', '```', shown, '```');
  }
  if (data.change) {
    const files = data.change.files.map((file) => `${file.status} ${file.path}`);
    lines.push('', `Changes on ${data.git?.branch ?? 'the branch'} against ${data.change.base.slice(0, 12)} (${files.length} file${files.length === 1 ? '' : 's'}: ${files.join(', ') || 'none'}):`);
    lines.push('```diff', artifact(data.change.diff.trimEnd(), MAX_DIFF_CHARS, 'change.diff') || '(no changes)', '```');
    lines.push('run_linter, run_tests and analyze_complexity look at the changed files when you name none.');
  }
  if (data.revision > 0) {
    lines.push('', `The previous review (revision ${data.revision - 1}) asked for:`, ...data.previousIssues.map((issue) => artifact(formatIssue(issue), MAX_ENTRY_CHARS, 'previousIssues')));
    lines.push('', `Changes since revision ${data.revision - 1}:`, '```diff', artifact(data.diff ?? '', MAX_DIFF_CHARS, 'diff') || '(no changes)', '```');
    lines.push('', 'Check first whether those issues are fixed; do not raise new minor points that were there before.');
  }
  lines.push(
    '',
    'Review it: run_linter and run_tests are required; run_check runs checks you write for the criteria. Then approve_code with a verdict and evidence for every criterion, or request_revision with issues and their severity.',
  );
  return lines.join('\n');
}

/** A stage defined in autoteam.config.json: what came before, and how to end it. */
function customStageHandoff(data: HandoffData, lines: string[]): string {
  if (data.submitted) {
    const files = Object.keys(data.submitted.files ?? { [data.submitted.file]: '' });
    lines.push('', `Submitted and approved: ${data.submitted.file}${files.length > 1 ? ` (with ${files.filter((f) => f !== data.submitted!.file).join(', ')})` : ''} — in your workspace.`);
  }
  for (const [stage, report] of Object.entries(data.reports ?? {})) lines.push('', `Report of the ${stage} stage: ${artifact(report, MAX_REPORT_CHARS, `reports.${stage}`)}`);
  const signals = Object.keys(stageOf(data.stage).transitions);
  lines.push('', `Do this stage's work as your instructions say, then end it with ${signals.join(' or ')}${signals.includes('complete_stage') ? '(report)' : ''}.`);
  return lines.join('\n');
}

/**
 * The first user message of a task's conversation: the task and what the previous stage handed over.
 * Each part is cut to TASK_PROMPT_LIMITS (a hand-written task may hold megabytes), with a note
 * naming the task field that holds the whole; the message stays well under TOKEN_BUDGET, so a
 * compacted conversation, which starts with it again, is short.
 */
export function taskPrompt(task: Task): string {
  const stage = task.stage ? ` [${task.stage}${task.revision ? `, revision ${task.revision}` : ''}]` : '';
  const where = (field: string) => `the whole is in task #${task.id}'s ${field} on the board`;
  const lines = [`Task #${task.id}${stage}: ${cutText(task.subject, TASK_PROMPT_LIMITS.subject, where('subject'))}`];
  if (task.description && task.description !== task.subject) lines.push('', cutText(task.description, TASK_PROMPT_LIMITS.description, where('description')));
  if (task.handoff) lines.push('', '<handoff>', cutText(task.handoff, TASK_PROMPT_LIMITS.handoff, where('handoff')), '</handoff>');
  if (task.artifacts.requirePlan === true) lines.push('', 'This task requires plan approval: submit your plan with plan_approval before doing the work.');
  return lines.join('\n');
}

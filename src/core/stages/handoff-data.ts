import type { Artifacts, Change, Criterion, GitInfo, Issue, QaEntry, Submitted } from '../board/artifacts.js';
import type { Stage, Task } from '../board/schemas.js';
import { cutText } from '../sizes.js';

/**
 * What one artifact may take of a handoff, in characters. A handoff is read by a model on every call
 * of the next stage: what is longer is cut with a note saying where the whole is (the task's
 * artifacts travel with it), so a large artifact never makes a request too large.
 */
export const HANDOFF_LIMITS = { file: 12_000, requirement: 40_000, diff: 20_000, entry: 4_000, report: 8_000 } as const;

/** `value` cut to `max` characters, saying which artifact of this task holds the whole. */
export function artifact(value: string, max: number, key: string): string {
  return cutText(value, max, `the whole is in this task's artifacts.${key}`);
}

/**
 * What one stage hands the next, as data. It is built from the task's artifacts only, rendered to
 * text by the stage's definition (`handoff`), and given as it is to models that take structured
 * context (the offline model), so nothing has to parse the runtime's prose.
 */
export interface HandoffData {
  stage: Stage;
  revision: number;
  requirement: string;
  requirements: Record<string, string>;
  summary?: string;
  qa: QaEntry[];
  criteria: Criterion[];
  /** What the stage that sent the work back asked for. */
  issues: Issue[];
  /** What was submitted. */
  submitted?: Submitted;
  /** At revision ≥ 1 after a send-back: the issues of the previous round, and the diff against it. */
  previousIssues: Issue[];
  diff?: string;
  /** Reports of earlier stages defined in autoteam.config.json. */
  reports?: Record<string, string>;
  /** Repository mode: the pipeline's branch, and the change against its base commit. */
  git?: GitInfo;
  change?: Change;
}

export function handoffData(task: Pick<Task, 'stage' | 'revision' | 'description' | 'artifacts'>): HandoffData {
  const a: Artifacts = task.artifacts;
  return {
    stage: task.stage ?? '',
    revision: task.revision,
    requirement: a.requirement ?? task.description,
    requirements: a.requirements ?? {},
    ...(a.summary ? { summary: a.summary } : {}),
    qa: a.qa ?? [],
    criteria: a.criteria ?? [],
    issues: a.issues ?? [],
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

/** The part of every handoff that says what is wanted: the requirement and its analysis. */
export function requirementsSection(data: HandoffData): string[] {
  const { entry, report } = HANDOFF_LIMITS;
  const lines = [`Original requirement: ${artifact(data.requirement, HANDOFF_LIMITS.requirement, 'requirement')}`];
  const entries = Object.entries(data.requirements);
  if (entries.length) lines.push('', 'Requirements (from the analyst):', ...entries.map(([key, value]) => artifact(`- ${key}: ${value}`, entry, `requirements.${key}`)));
  if (data.criteria.length) lines.push('', 'Acceptance criteria:', ...data.criteria.map((c) => artifact(formatCriterion(c), entry, 'criteria')));
  if (data.summary) lines.push('', `Analyst summary: ${artifact(data.summary, report, 'summary')}`);
  if (data.qa.length) lines.push('', 'Clarifications:', ...data.qa.flatMap((qa) => [artifact(`Q: ${qa.question}`, entry, 'qa'), artifact(`A: ${qa.answer}`, entry, 'qa')]));
  return lines;
}

/** What was submitted and the reports of configured stages, as a stage after the review reads them. */
export function carriedSection(data: HandoffData): string[] {
  const lines: string[] = [];
  if (data.submitted) {
    const files = Object.keys(data.submitted.files ?? { [data.submitted.file]: '' });
    lines.push('', `Submitted and approved: ${data.submitted.file}${files.length > 1 ? ` (with ${files.filter((f) => f !== data.submitted!.file).join(', ')})` : ''} — in your workspace.`);
  }
  for (const [stage, report] of Object.entries(data.reports ?? {})) lines.push('', `Report of the ${stage} stage: ${artifact(report, HANDOFF_LIMITS.report, `reports.${stage}`)}`);
  return lines;
}

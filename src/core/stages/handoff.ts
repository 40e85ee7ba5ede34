import type { Task } from '../board/schemas.js';
import type { QaEntry } from '../tools/ask-clarifying-question.js';

const MAX_FILE_CHARS = 12_000;

export interface HandoffContext {
  requirement: string;
  requirements: Record<string, string>;
  summary?: string;
  qa?: QaEntry[];
}

function requirementsSection(context: HandoffContext): string {
  const lines = [`Original requirement: ${context.requirement}`];
  const entries = Object.entries(context.requirements);
  if (entries.length) {
    lines.push('', 'Requirements (from the analyst):', ...entries.map(([key, value]) => `- ${key}: ${value}`));
  }
  if (context.summary) lines.push('', `Analyst summary: ${context.summary}`);
  if (context.qa?.length) {
    lines.push('', 'Clarifications:', ...context.qa.flatMap((entry) => [`Q: ${entry.question}`, `A: ${entry.answer}`]));
  }
  return lines.join('\n');
}

export function implementationHandoff(context: HandoffContext, revision = 0, issues: string[] = [], file?: string): string {
  const parts = [requirementsSection(context)];
  if (revision > 0) {
    parts.push(
      '',
      `This is revision ${revision}. The reviewer sent ${file ?? 'the code'} back with these issues:`,
      ...issues.map((issue) => `- ${issue}`),
      '',
      `Your previous files are in the workspace. Fix every issue, run the code again, then submit_for_review(${file ?? 'file'}).`,
    );
  } else {
    parts.push('', 'Implement it in the workspace, run it, then submit_for_review(file).');
  }
  return parts.join('\n');
}

export function reviewHandoff(context: HandoffContext, file: string, content: string, revision: number, sha256: string): string {
  const shown = content.length > MAX_FILE_CHARS ? `${content.slice(0, MAX_FILE_CHARS)}\n…[cut]` : content;
  return [
    requirementsSection(context),
    '',
    `Submitted file: ${file} (revision ${revision}, sha256 ${sha256.slice(0, 12)})`,
    '',
    '```',
    shown,
    '```',
    '',
    `Review ${file}: run the linter, the tests and the complexity analysis, then approve_code or request_revision.`,
  ].join('\n');
}

/** The first user message of a task's conversation: the task and what the previous stage handed over. */
export function taskPrompt(task: Task): string {
  const stage = task.stage ? ` [${task.stage}${task.revision ? `, revision ${task.revision}` : ''}]` : '';
  const lines = [`Task #${task.id}${stage}: ${task.subject}`];
  if (task.description && task.description !== task.subject) lines.push('', task.description);
  if (task.handoff) lines.push('', '<handoff>', task.handoff, '</handoff>');
  if (task.artifacts.requirePlan === true) lines.push('', 'This task requires plan approval: submit your plan with plan_approval before doing the work.');
  return lines.join('\n');
}

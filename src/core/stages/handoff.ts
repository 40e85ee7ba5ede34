import type { Task } from '../board/schemas.js';
import { cutText } from '../sizes.js';
import type { HandoffData } from './handoff-data.js';
import { BUILTIN_REGISTRY, type StageRegistry } from './stage-registry.js';

export { formatCriterion, formatIssue, handoffData, type HandoffData } from './handoff-data.js';

/** Characters of each part of a task's first message (subject, description, handoff): see taskPrompt. */
export const TASK_PROMPT_LIMITS = { subject: 1_000, description: 40_000, handoff: 60_000 } as const;

/** The handoff text of a task: its stage's rendering of the stage data (`content`: what the stage's `prepare` read). */
export function renderHandoff(data: HandoffData, content?: string, stages: StageRegistry = BUILTIN_REGISTRY): string {
  return stages.get(data.stage).handoff(data, content);
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

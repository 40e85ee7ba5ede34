import type { Artifacts } from '../board/artifacts.js';
import type { Task } from '../board/schemas.js';

/**
 * The message of the commit an approval makes on the pipeline's branch: the requirement as the
 * subject, the criteria with their verdicts and the approving comment in the body.
 */
export function approvalCommitMessage(task: Task, artifacts: Artifacts): string {
  const requirement = task.artifacts.requirement ?? task.description;
  const firstLine = requirement.split('\n')[0]!.trim();
  const subject = firstLine.length > 72 ? `${firstLine.slice(0, 71)}…` : firstLine;
  const verdicts = new Map((artifacts.criteriaVerdicts ?? []).map((v) => [v.id, v]));
  const body = [
    // A subject cut short, or a requirement of several lines: the whole of it in the body.
    ...(subject !== requirement.trim() ? ['Requirement:', requirement.trim(), ''] : []),
    'Acceptance criteria:',
    ...(task.artifacts.criteria ?? []).map((c) => `- [${c.id}] ${c.criterion}${verdicts.get(c.id)?.met ? ` — met: ${verdicts.get(c.id)!.evidence}` : ''}`),
    '',
    `Review: ${artifacts.comment ?? 'approved'}`,
    '',
    `autoteam pipeline #${task.pipeline}, approved in task #${task.id} (revision ${task.revision})`,
  ];
  return `${subject}\n\n${body.join('\n')}\n`;
}

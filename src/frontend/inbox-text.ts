import type { LeadApi } from '../core/lead/lead-api.js';

/** `/inbox`: the lead's unread messages (taking them), lines its inbox could not read, and the plans and questions waiting on the person. */
export function inboxText(session: LeadApi): string {
  const lines: string[] = [];
  const rejected = session.takeRejectedLines();
  if (rejected) {
    const which = rejected.lines.map((line) => `${line.at}: ${line.problem}`).join('; ');
    const more = rejected.count > rejected.lines.length ? `; and ${rejected.count - rejected.lines.length} more` : '';
    lines.push(`  ${rejected.count} unreadable line${rejected.count === 1 ? '' : 's'} moved to ${rejected.movedTo}: ${which}${more}`);
  }
  const { plans, questions } = session.snapshot();
  const waiting = new Set(plans.map((plan) => plan.id));
  for (const message of session.takeUnread()) {
    // A plan still waiting is listed below once, with how to decide it.
    if (message.type === 'plan_approval_request' && waiting.has(String(message.requestId))) continue;
    const kind = message.type === 'message' ? '' : ` [${message.type}]`;
    lines.push(`  ${message.from}${kind}: ${message.content}`);
  }
  for (const plan of plans) {
    lines.push(`  plan ${plan.id} from ${plan.from}: ${plan.plan ?? ''}  → /approve ${plan.id} or /reject ${plan.id} <why>`);
  }
  // Named as the question box names it; with several waiting, `#N` reaches pipeline N's (answer.ts).
  for (const question of questions) {
    const whose = question.pipeline != null ? ` (pipeline #${question.pipeline})` : question.task ? ` (task #${question.task})` : '';
    const how = questions.length > 1 && question.pipeline != null ? `type '#${question.pipeline} <answer>'` : 'type the answer';
    lines.push(`  ${question.from} asks${whose}: ${question.question}  → ${how}`);
  }
  return lines.length ? ['Inbox:', ...lines].join('\n') : 'Inbox empty.';
}

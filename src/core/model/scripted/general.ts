import { callsOf, type Decision, lastCall, type ToolCall } from './conversation.js';
import { REAL_MODEL_HINT } from './repertoire.js';
import type { RequestContext } from '../types.js';

const MAX_PLAN_ROUNDS = 3;
const MAX_RESULT_LINES = 40;
const MAX_RESULT_CHARS = 4_000;

/** What the offline model says of a general task it cannot really do. */
export const OFFLINE_CANNOT_TASK = `the offline model cannot do this task (offline, a general task can only run a command given in backticks, e.g. run \`ls\`) — ${REAL_MODEL_HINT}`;

/**
 * A general (stage-less) task: plan approval when asked for, then the one thing the offline model can
 * really do — run the command the task names in backticks — and report its real result. Anything
 * else fails honestly: a note that repeats the task is not the task done.
 */
export function generalTurn(task: Pick<NonNullable<RequestContext['task']>, 'subject' | 'description' | 'requirePlan'>, calls: readonly ToolCall[]): Decision {
  // The person's words (the task as posted) may name a command; the runtime's own prose is never read.
  const command = /`([^`]+)`/.exec(`${task.subject}\n${task.description}`)?.[1];
  if (!command) return { text: 'I cannot do this offline.', calls: [{ name: 'fail_task', input: { reason: OFFLINE_CANNOT_TASK } }] };
  const action = `run \`${command}\` in the workspace`;

  if (task.requirePlan) {
    const plans = callsOf(calls, 'plan_approval');
    const verdict = lastCall(calls, 'plan_approval')?.result?.content ?? '';
    if (!/^APPROVED/.test(verdict)) {
      if (plans.length >= MAX_PLAN_ROUNDS) {
        return { text: 'My plan was not approved; giving the task up.', calls: [{ name: 'fail_task', input: { reason: `my plan was not approved after ${plans.length} rounds` } }] };
      }
      const feedback = /Feedback: (.+)$/s.exec(verdict)?.[1]?.trim();
      const plan = [`1. ${action[0]!.toUpperCase()}${action.slice(1)}.`, '2. Check the result.', '3. Report it with complete_task.'];
      if (feedback) plan.push(`Revised after feedback: ${feedback}`);
      return { text: 'Submitting my plan for approval.', calls: [{ name: 'plan_approval', input: { plan: plan.join('\n') } }] };
    }
  }

  if (callsOf(calls, 'bash').length === 0) {
    return { text: `Running \`${command}\`.`, calls: [{ name: 'bash', input: { command } }] };
  }
  const done = lastCall(calls, 'bash');
  const content = done?.result?.content ?? '';
  if (done?.result && (done.result.isError || !/^exit 0\b/.test(content))) {
    const outcome = content.split('\n').filter(Boolean).slice(0, 3).join(' | ');
    return { text: 'That did not work.', calls: [{ name: 'fail_task', input: { reason: `\`${command}\`: ${outcome}`.slice(0, 300) } }] };
  }
  // The result is the command's real output (its first lines), as the person would read it.
  return { text: 'Done.', calls: [{ name: 'complete_task', input: { result: `\`${command}\`: ${reported(content)}` } }] };
}

/** What a bash result says, kept to MAX_RESULT_LINES lines and MAX_RESULT_CHARS characters. */
function reported(content: string): string {
  const lines = content.split('\n').filter((line) => line.trim() !== '');
  let text = lines.slice(0, MAX_RESULT_LINES).join('\n');
  if (text.length > MAX_RESULT_CHARS) text = `${text.slice(0, MAX_RESULT_CHARS)}…`;
  const more = lines.length - MAX_RESULT_LINES;
  return more > 0 ? `${text}\n… (${more} more lines)` : text;
}

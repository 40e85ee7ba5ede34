import { callsOf, type Decision, lastCall, type ToolCall } from './conversation.js';

const MAX_PLAN_ROUNDS = 3;

/** A general (stage-less) task: plan approval when asked for, then one real action, then complete. */
export function generalTurn(task: string, calls: readonly ToolCall[]): Decision {
  const id = /^Task #(\d+)/.exec(task)?.[1] ?? '0';
  const subject = /^Task #\d+: (.+)$/m.exec(task)?.[1] ?? 'task';
  const command = /`([^`]+)`/.exec(task)?.[1];
  const action = command ? `run \`${command}\` in the workspace` : `write task-${id}.md with the task's notes`;

  if (/requires plan approval/.test(task)) {
    const plans = callsOf(calls, 'plan_approval');
    const verdict = lastCall(calls, 'plan_approval')?.result?.content ?? '';
    if (!/^APPROVED/.test(verdict)) {
      if (plans.length >= MAX_PLAN_ROUNDS) {
        return { text: 'My plan was not approved; leaving the task.', calls: [{ name: 'idle', input: { reason: 'plan not approved' } }] };
      }
      const feedback = /Feedback: (.+)$/s.exec(verdict)?.[1]?.trim();
      const plan = [`1. ${action[0]!.toUpperCase()}${action.slice(1)}.`, '2. Check the result.', '3. Report it with complete_task.'];
      if (feedback) plan.push(`Revised after feedback: ${feedback}`);
      return { text: 'Submitting my plan for approval.', calls: [{ name: 'plan_approval', input: { plan: plan.join('\n') } }] };
    }
  }

  if (command && callsOf(calls, 'bash').length === 0) {
    return { text: `Running \`${command}\`.`, calls: [{ name: 'bash', input: { command } }] };
  }
  if (!command && callsOf(calls, 'write_file').length === 0) {
    const body = task.replace(/^Task #\d+: .+\n*/, '').trim();
    return {
      text: `Writing task-${id}.md.`,
      calls: [{ name: 'write_file', input: { path: `task-${id}.md`, content: `# ${subject}\n\n${body || subject}\n` } }],
    };
  }
  const done = lastCall(calls, command ? 'bash' : 'write_file');
  const outcome = (done?.result?.content ?? '').split('\n').filter(Boolean).slice(0, 3).join(' | ');
  if (done?.result && (done.result.isError || (command && !/^exit 0\b/.test(done.result.content)))) {
    return { text: 'That did not work.', calls: [{ name: 'fail_task', input: { reason: `${command ? `\`${command}\`` : 'write'}: ${outcome}`.slice(0, 300) } }] };
  }
  return { text: 'Done.', calls: [{ name: 'complete_task', input: { result: `${command ? `\`${command}\`` : `task-${id}.md`}: ${outcome}`.slice(0, 300) } }] };
}

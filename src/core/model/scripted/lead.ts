import { callsOf, type Decision, type ToolCall } from './conversation.js';

const STATUS_QUESTION = /\b(status|progress|board|tasks?|team|doing|done)\b.*\?\s*$/i;

/**
 * The offline lead: a question about the work lists the tasks; anything else is a requirement and
 * becomes a pipeline. It reports the tools' real results back to the person.
 */
export function leadTurn(userText: string, calls: readonly ToolCall[]): Decision {
  const created = callsOf(calls, 'create_task');
  const listed = callsOf(calls, 'list_tasks');
  if (created.length > 0 || listed.length > 0) {
    const result = (created.at(-1) ?? listed.at(-1))!.result;
    return { text: result?.content ?? 'Done.', calls: [] };
  }
  if (STATUS_QUESTION.test(userText.trim())) return { text: 'Here is the board.', calls: [{ name: 'list_tasks', input: {} }] };
  return {
    text: 'Posting this as a requirement for the team.',
    calls: [{ name: 'create_task', input: { requirement: userText.trim() } }],
  };
}

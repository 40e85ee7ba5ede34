import { callsOf, type Decision, type ToolCall } from './conversation.js';

/** "create a task to run `ls`", "add a task: write the changelog" → one general task, not a pipeline. */
const GENERAL_TASK = /^(?:please\s+)?(?:create|add|post|make)\s+(?:a\s+)?(?:general\s+)?task\s*(?:to|:|that|for)?\s+(.+)$/is;

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
  const text = userText.trim();
  if (STATUS_QUESTION.test(text)) return { text: 'Here is the board.', calls: [{ name: 'list_tasks', input: {} }] };
  const general = GENERAL_TASK.exec(text);
  if (general) {
    const subject = general[1]!.trim();
    return { text: 'Posting it as a general task.', calls: [{ name: 'create_task', input: { subject, description: subject } }] };
  }
  if (text.split(/\s+/).length < 3) {
    return { text: 'Tell me what you want built in a sentence, e.g. "Write a Python script that counts the words in a file."', calls: [] };
  }
  return {
    text: 'Posting this as a requirement for the team.',
    calls: [{ name: 'create_task', input: { requirement: text } }],
  };
}

import { type Decision, lastCall, type ToolCall } from './conversation.js';
import { REAL_MODEL_HINT } from './repertoire.js';

/** "create a task to run `ls`", "add a task: write the changelog" → one general task, not a pipeline. */
const GENERAL_TASK = /^(?:please\s+)?(?:create|add|post|make)\s+(?:a\s+)?(?:general\s+)?task\s*(?:to|:|that|for)?\s+(.+)$/is;

const STATUS_QUESTION = /\b(status|progress|board|tasks?|team|doing|done)\b.*\?\s*$/i;

/** "what files are here?", "what is in this folder", "list the files", "ls". */
const LIST_FILES = /^(?:(?:what|which)\s+files\b.*|what(?:'s| is)\s+(?:here|in\s+(?:this|the)\s+(?:folder|directory))\b.*|(?:please\s+)?list\s+(?:the\s+|all\s+)?files\b.*|ls)\??$/i;

/** "show me README.md", "cat notes.txt", "what does config.json say?" */
const SHOW_FILE = /^(?:please\s+)?(?:show(?:\s+me)?|cat|read|open|print|display)\s+(?:the\s+file\s+)?[`'"]?([\w./-]+)[`'"]?\s*\??$|^what\s+does\s+[`'"]?([\w./-]+)[`'"]?\s+say\s*\??$/i;

/** "in README.md replace 'teh' with 'the'", "replace "a" with "b" in x.py". */
const REPLACE =
  /^(?:in\s+[`'"]?([\w./-]+)[`'"]?,?\s+)?replace\s+(['"`])(.+?)\2\s+(?:with|by)\s+(['"`])(.*?)\4(?:\s+in\s+[`'"]?([\w./-]+)[`'"]?)?\s*\.?$/is;

/** "fix the typo in README", "update config.json": an edit the offline model cannot make up. */
const VAGUE_EDIT = /\b(?:fix|correct|change|edit|update|rewrite|rename|tidy|clean\s+up)\b.*\b(?:[\w-]+\.[a-z0-9]{1,8}|README|Makefile|Dockerfile|LICENSE)\b/i;

/** "run `ls -la`", "run the command 'ls -la workspace'": a command spelled out in quotes, for the lead's bash. */
const RUN_COMMAND = /^(?:please\s+)?(?:run|execute)\s+(?:the\s+command\s+)?([`'"])(.+?)\1\s*\.?$/s;

/** "write a file notes.txt containing 'hello world'": a file and its words in quotes, for the lead's write_file. */
const WRITE_FILE = /^(?:please\s+)?(?:write|create|make)\s+(?:a\s+|the\s+)?(?:new\s+)?file\s+(?:called\s+|named\s+)?[`'"]?([\w./-]+)[`'"]?\s+(?:containing|with\s+the\s+(?:text|content|contents))\s+([`'"])([\s\S]*)\2\s*\.?$/i;

/** ", with plan approval", "and a plan first", "(needs a plan)" at the end of a general task's words. */
const WITH_PLAN = /[\s,;(]+(?:with|and|needs?|requires?|needing|requiring)\s+(?:a\s+plan(?:\s+approval)?(?:\s+first)?|plan\s+approval(?:\s+first)?|plan\s+first)\)?\s*\.?$/i;

/** "take task #5", "claim task 5", "do task #5 yourself", "work on task 5". */
const CLAIM = /^(?:please\s+)?(?:take|claim|do|work\s+on|handle)\s+task\s+#?(\d+)\b/i;

const REPLY_CHARS = 2_000;

/**
 * The offline lead: a question about the work lists the tasks; "what files are here", "show me X",
 * "run `command`", "write a file X containing …" and an exact "replace 'a' with 'b' in X" use its own
 * hands and answer from their real results; an
 * edit it cannot spell out itself is declined with how to get it done; "take task #N" claims a
 * general task for the lead; anything else is a requirement and becomes a pipeline.
 */
export function leadTurn(userText: string, calls: readonly ToolCall[], offered: ReadonlySet<string> = new Set()): Decision {
  const done = lastCall(calls);
  if (done) return { text: replyFrom(done), calls: [] };
  const text = userText.trim();
  const hand = (name: string) => offered.size === 0 || offered.has(name);
  if (LIST_FILES.test(text)) {
    if (hand('bash')) return { text: 'Listing the folder.', calls: [{ name: 'bash', input: { command: 'ls -la' } }] };
    if (hand('read_file')) return { text: 'Listing the folder.', calls: [{ name: 'read_file', input: { path: '.' } }] };
    return turnedOff('list the folder: my file and shell tools are turned off');
  }
  const show = SHOW_FILE.exec(text);
  if (show) {
    const file = show[1] ?? show[2]!;
    if (hand('read_file')) return { text: `Reading ${file}.`, calls: [{ name: 'read_file', input: { path: file } }] };
    return turnedOff(`show ${file}: my file tools are turned off`);
  }
  const replace = REPLACE.exec(text);
  if (replace && (replace[1] ?? replace[6])) {
    const file = (replace[1] ?? replace[6])!;
    if (hand('edit_file')) return { text: `Editing ${file}.`, calls: [{ name: 'edit_file', input: { path: file, old_text: replace[3], new_text: replace[5] } }] };
    return turnedOff(`edit ${file}: my file tools are turned off`);
  }
  const run = RUN_COMMAND.exec(text);
  if (run) {
    const command = run[2]!.trim();
    if (hand('bash')) return { text: `Running \`${command}\`.`, calls: [{ name: 'bash', input: { command } }] };
    return turnedOff(`run \`${command}\`: my shell tool is turned off`);
  }
  const write = WRITE_FILE.exec(text);
  if (write) {
    const file = write[1]!;
    // The words in the quotes, with a final line break as files have; empty quotes, an empty file.
    const content = write[3] ? `${write[3]}\n` : '';
    if (hand('write_file')) return { text: `Writing ${file}.`, calls: [{ name: 'write_file', input: { path: file, content } }] };
    return turnedOff(`write ${file}: my file tools are turned off`);
  }
  const claim = CLAIM.exec(text);
  if (claim) return { text: `Taking task #${claim[1]} myself.`, calls: [{ name: 'claim_task', input: { task_id: Number(claim[1]) } }] };
  if (STATUS_QUESTION.test(text)) return { text: 'Here is the board.', calls: [{ name: 'list_tasks', input: {} }] };
  const general = GENERAL_TASK.exec(text);
  if (general) {
    // "…, with plan approval": the teammate submits its plan first, for the person to /approve.
    const planned = WITH_PLAN.exec(general[1]!);
    const subject = (planned ? general[1]!.slice(0, planned.index) : general[1]!).trim();
    return { text: 'Posting it as a general task.', calls: [{ name: 'create_task', input: { subject, description: subject, ...(planned ? { require_plan: true } : {}) } }] };
  }
  if (VAGUE_EDIT.test(text)) {
    return cannot("make that change: offline I only edit what is spelled out, e.g. in README.md replace 'teh' with 'the'");
  }
  if (text.split(/\s+/).length < 3) {
    return { text: 'Tell me what you want built in a sentence, e.g. "Write a Python script that counts the words in a file."', calls: [] };
  }
  return {
    text: 'Posting this as a requirement for the team.',
    calls: [{ name: 'create_task', input: { requirement: text } }],
  };
}

/** A hand the config took away: a model would not have it either, so the way out is the config. */
function turnedOff(what: string): Decision {
  return { text: `I cannot ${what}: lead.tools in autoteam.config.json leaves them out (a model would not have them either).`, calls: [] };
}

function cannot(what: string): Decision {
  return { text: `I cannot ${what} (or ${REAL_MODEL_HINT.replace(/ to run it on a model$/, '')} for a model that can).`, calls: [] };
}

/** The real result of the tool the lead just used, as its answer to the person. */
function replyFrom(call: ToolCall): string {
  const result = call.result?.content ?? 'Done.';
  const shown = cut(result);
  if (call.result?.isError) return `That did not work: ${shown}`;
  if (call.name === 'read_file') return `${String(call.input.path)}:\n${shown}`;
  if (call.name === 'bash') return ranCommand(String(call.input.command), result);
  // The post's own line is on screen already (the tool's): the reply says what comes next instead.
  const posted = /^Posted pipeline #(\d+)/.exec(result);
  if (call.name === 'create_task' && posted) return `Pipeline #${posted[1]} is on the board: the analyst who takes it may ask you a question or two here; /tasks shows the board.`;
  const created = /^Created task #(\d+)/.exec(result);
  if (call.name === 'create_task' && created) return `Task #${created[1]} is on the board: a teammate takes it, and its result shows here when it is done.`;
  return shown;
}

/**
 * What a command of the lead's printed, led by the command: the tool's own line on screen already
 * gives its exit status and time (`[lead] bash: exit 0 (110 ms)`), so the reply does not repeat it.
 */
function ranCommand(command: string, result: string): string {
  const [status = '', ...rest] = result.split('\n');
  const output = rest.join('\n');
  // Output on stdout alone needs no label; with stderr beside it, both keep theirs. Cut after that is decided.
  const shown = output.startsWith('stdout:\n') && !output.includes('\nstderr:\n') ? output.slice('stdout:\n'.length) : output;
  return `\`${command}\`: ${status.replace(/ \(\d+ ms\)$/, '')}${shown ? `\n${cut(shown)}` : ''}`;
}

/** A reply's text kept to REPLY_CHARS, saying how much more there was. */
function cut(text: string): string {
  return text.length > REPLY_CHARS ? `${text.slice(0, REPLY_CHARS)}\n… (${text.length - REPLY_CHARS} more characters)` : text;
}

import type { HandoffData } from '../../stages/handoff.js';
import { callsOf, commandNotFound, type Decision, installHint, lastCall, type ToolCall } from './conversation.js';
import { applyFixes, buildProgram, draftOf } from './programs.js';
import { detectLanguage, kindOf, OFFLINE_CANNOT, organizerSpec, otherLanguage, REAL_MODEL_HINT, wordcountSupports } from './repertoire.js';
import { counted } from '../../words.js';

function exitedOk(call: ToolCall | undefined): boolean {
  return call?.result !== undefined && !call.result.isError && /^exit 0\b/.test(call.result.content);
}

const fail = (reason: string, text = 'This is beyond what I can do offline.'): Decision => ({ text, calls: [{ name: 'fail_task', input: { reason } }] });

/**
 * The engineer: write a program of the repertoire (honouring the analyst's spec), run it for real,
 * then submit; on a revision, fix the issues in the file as read back. For anything it cannot build
 * or fix it fails the task and says so, never submitting a stub.
 */
export function engineerTurn(handoff: HandoffData, calls: readonly ToolCall[]): Decision {
  const { requirement, requirements, revision, issues } = handoff;
  const kind = kindOf(requirement);
  if (!kind) return fail(OFFLINE_CANNOT);
  const spec = organizerSpec(requirements);
  if (!spec.ok) return fail(`${OFFLINE_CANNOT} (${spec.reason})`);
  const language = otherLanguage(requirements.language ?? '');
  if (language) return fail(`${OFFLINE_CANNOT} (it writes Python and JavaScript, not ${language})`);
  const counter = kind === 'wordcount' ? wordcountSupports(requirements) : null;
  if (counter && !counter.ok) return fail(`${OFFLINE_CANNOT} (${counter.reason})`);
  const program = buildProgram(kind, detectLanguage(`${requirements.language ?? ''} ${requirement}`), spec.value);
  const file = handoff.submitted?.file ?? program.file;
  const writes = [...callsOf(calls, 'write_file'), ...callsOf(calls, 'edit_file')].filter((call) => call.input.path === file);
  const last = lastCall(calls);
  const texts = issues.map((issue) => issue.text);

  if (last?.name === 'submit_for_review' && last.result?.isError) {
    // Refused (by the person's TaskCompleted hook, say): run it again and submit once more; a second
    // refusal is given up on, quoting it — the offline model cannot act on what it says.
    const refused = callsOf(calls, 'submit_for_review').filter((call) => call.result?.isError).length;
    if (refused < 2) return { text: 'The submission was refused; running it again before submitting once more.', calls: [{ name: 'bash', input: { command: program.tryCommand } }] };
    // The refusal is the reason, said first: a hook that always blocks is not the model's doing.
    const why = last.result.content.split('\n').find((line) => line.trim()) ?? '';
    return fail(`its submission was refused twice: ${why.slice(0, 300)} (the offline model cannot act on what a refusal says — ${REAL_MODEL_HINT})`);
  }
  if (revision > 0 && callsOf(calls, 'read_file').length === 0) {
    return { text: `Revision ${revision}: reading ${file} to fix ${counted(issues.length, 'issue')}.`, calls: [{ name: 'read_file', input: { path: file } }] };
  }
  if (writes.length === 0) {
    if (revision === 0) {
      const first: Decision['calls'] = [{ name: 'write_file', input: { path: file, content: draftOf(program) } }];
      if (program.tests) first.push({ name: 'write_file', input: { path: program.tests.file, content: program.tests.content } });
      return { text: `Writing ${file}${program.tests ? ` and ${program.tests.file}` : ''}.`, calls: first };
    }
    const read = lastCall(calls, 'read_file');
    const current = read?.result && !read.result.isError ? read.result.content : null;
    const fixed = (current && applyFixes(current, texts, program)) ?? program.content;
    return { text: `Fixing: ${texts.join('; ')}`, calls: [{ name: 'write_file', input: { path: file, content: fixed } }] };
  }
  const runs = callsOf(calls, 'bash');
  if (last?.name === 'write_file' || last?.name === 'edit_file' || runs.length === 0) {
    return { text: 'Running it on a scratch folder.', calls: [{ name: 'bash', input: { command: program.tryCommand } }] };
  }
  // No rewrite of the program mends a command the machine lacks: the task fails naming it, rather
  // than on the refusal of a second submission that changed nothing.
  const missing = last?.name === 'bash' ? commandNotFound(last) : null;
  if (missing) return fail(`the run of ${file} could not find \`${missing}\` on this machine (exit 127): ${installHint(missing)}`, `${missing} is not found here.`);
  if (last?.name === 'bash' && !exitedOk(last) && writes.length < 2) {
    return { text: 'The run failed; rewriting the program.', calls: [{ name: 'write_file', input: { path: file, content: program.content } }] };
  }
  const ran = exitedOk(lastCall(calls, 'bash')) ? 'It runs' : 'It did not run cleanly';
  return { text: `${ran}; submitting ${file} for review.`, calls: [{ name: 'submit_for_review', input: { file } }] };
}

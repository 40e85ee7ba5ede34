import { applyFixes, buildProgram, detectLanguage, draftOf, type Program } from './programs.js';
import { callsOf, type Decision, handoffValue, lastCall, type ToolCall } from './conversation.js';

export interface EngineerBrief {
  requirement: string;
  requirements: Record<string, string>;
  revision: number;
  issues: string[];
  file?: string;
}

/** Reads what the engineer needs from the task text (the handoff written by the runtime). */
export function parseEngineerBrief(task: string): EngineerBrief {
  const requirement = /^Original requirement: (.+)$/m.exec(task)?.[1]?.trim() ?? task.split('\n')[0] ?? '';
  const requirements: Record<string, string> = {};
  const section = /Requirements \(from the analyst\):\n((?:- .+\n?)+)/.exec(task)?.[1] ?? '';
  for (const line of section.split('\n')) {
    const match = /^- ([^:]+): (.+)$/.exec(line);
    if (match) requirements[match[1]!.trim()] = match[2]!.trim();
  }
  const revision = Number(/This is revision (\d+)/.exec(task)?.[1] ?? 0);
  const issuesBlock = /back with these issues:\n((?:- .+\n?)+)/.exec(task)?.[1] ?? '';
  const issues = issuesBlock.split('\n').filter((line) => line.startsWith('- ')).map((line) => line.slice(2));
  const file = /The reviewer sent (\S+) back/.exec(task)?.[1];
  return { requirement, requirements, revision, issues, ...(file ? { file } : {}) };
}

function exitedOk(call: ToolCall | undefined): boolean {
  return call?.result !== undefined && !call.result.isError && /^exit 0\b/.test(call.result.content);
}

/** The engineer: write (or fix from the real file), run it for real, then submit. */
export function engineerTurn(task: string, calls: readonly ToolCall[]): Decision {
  const brief = parseEngineerBrief(task);
  const language = detectLanguage(`${handoffValue(task, 'language') ?? ''} ${brief.requirement}`);
  const program: Program = buildProgram({ requirement: brief.requirement, language, requirements: brief.requirements });
  const file = brief.file ?? program.file;
  const writes = [...callsOf(calls, 'write_file'), ...callsOf(calls, 'edit_file')].filter((call) => call.input.path === file);
  const runs = callsOf(calls, 'bash');
  const last = lastCall(calls);

  if (brief.revision > 0 && callsOf(calls, 'read_file').length === 0) {
    return { text: `Revision ${brief.revision}: reading ${file} to fix ${brief.issues.length} issue(s).`, calls: [{ name: 'read_file', input: { path: file } }] };
  }
  if (writes.length === 0) {
    if (brief.revision === 0) {
      const calls: Decision['calls'] = [{ name: 'write_file', input: { path: file, content: draftOf(program) } }];
      if (program.tests) calls.push({ name: 'write_file', input: { path: program.tests.file, content: program.tests.content } });
      return { text: `Writing ${file}${program.tests ? ` and ${program.tests.file}` : ''}.`, calls };
    }
    const read = lastCall(calls, 'read_file');
    const current = read?.result && !read.result.isError ? read.result.content : null;
    const fixed = (current && applyFixes(current, brief.issues, program)) ?? program.content;
    return { text: `Fixing: ${brief.issues.join('; ')}`, calls: [{ name: 'write_file', input: { path: file, content: fixed } }] };
  }
  if (last?.name === 'write_file' || last?.name === 'edit_file' || runs.length === 0) {
    return { text: 'Running it on a scratch folder.', calls: [{ name: 'bash', input: { command: program.tryCommand } }] };
  }
  if (last?.name === 'bash' && !exitedOk(last) && writes.length < 2) {
    return { text: 'The run failed; rewriting the program.', calls: [{ name: 'write_file', input: { path: file, content: program.content } }] };
  }
  if (last?.name === 'submit_for_review' && last.result?.isError && writes.length < 3) {
    return { text: 'Writing the file again before submitting.', calls: [{ name: 'write_file', input: { path: file, content: program.content } }] };
  }
  const ran = exitedOk(lastCall(calls, 'bash')) ? 'It runs' : 'It did not run cleanly';
  return { text: `${ran}; submitting ${file} for review.`, calls: [{ name: 'submit_for_review', input: { file } }] };
}

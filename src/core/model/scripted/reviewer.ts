import { callsOf, type Decision, lastCall, type ToolCall } from './conversation.js';

/** The reviewer: run the real linter, tests and complexity analysis, then judge from their output. */
export function reviewerTurn(task: string, calls: readonly ToolCall[]): Decision {
  const file = /Submitted file: (\S+)/.exec(task)?.[1] ?? 'main.py';
  const lint = lastCall(calls, 'run_linter');
  if (!lint) {
    return {
      text: `Reviewing ${file}.`,
      calls: [
        { name: 'run_linter', input: { file } },
        { name: 'run_tests', input: { file } },
        { name: 'analyze_complexity', input: { file } },
      ],
    };
  }
  const tests = lastCall(calls, 'run_tests');
  const complexity = lastCall(calls, 'analyze_complexity');
  const issues: string[] = [];
  for (const line of (lint.result?.content ?? '').split('\n')) {
    const match = /^\s*line (\d+) \[([^\]]+)\] (.+)$/.exec(line);
    if (match) issues.push(`${file} line ${match[1]}: ${match[3]} [${match[2]}]`);
  }
  const testText = tests?.result?.content ?? '';
  if (tests && (tests.result?.isError || /\bFAIL\b/.test(testText.split('\n')[0] ?? ''))) {
    issues.push(`tests fail: ${testText.split('\n').slice(0, 6).join(' | ').slice(0, 300)}`);
  }
  for (const line of (complexity?.result?.content ?? '').split('\n')) {
    if (line.includes('(high)')) issues.push(`too complex: ${line.trim().replace(/\s+\(high\)$/, '')}; split it into smaller functions`);
  }
  if (issues.length > 0 && callsOf(calls, 'request_revision').length === 0) {
    return { text: `Found ${issues.length} issue(s).`, calls: [{ name: 'request_revision', input: { issues } }] };
  }
  const first = (call: ToolCall | undefined) => (call?.result?.content ?? 'not run').split('\n')[0];
  return {
    text: 'Everything checks out.',
    calls: [{ name: 'approve_code', input: { comment: `${first(lint)}; ${first(tests)}; ${first(complexity)}.` } }],
  };
}

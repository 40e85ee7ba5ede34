import type { Criterion, Issue, Severity } from '../../board/artifacts.js';
import type { HandoffData } from '../../stages/handoff.js';
import { checksFor } from './checks.js';
import { callsOf, commandNotFound, type Decision, installHint, type ToolCall } from './conversation.js';
import { kindOf, REAL_MODEL_HINT } from './repertoire.js';
import { counted } from '../../words.js';

const LINT_SEVERITY: Record<string, Severity> = {
  'syntax-error': 'blocker',
  'module-docstring': 'major',
  'leading-comment': 'major',
  'bare-except': 'major',
  'line-too-long': 'minor',
  'trailing-whitespace': 'minor',
  tab: 'minor',
};

const fail = (reason: string): Decision => ({ text: 'I cannot judge this offline.', calls: [{ name: 'fail_task', input: { reason } }] });

/** Each criterion's planned checks, in the order they are run. */
function plan(handoff: HandoffData, file: string): Array<{ criterion: Criterion; codes: string[] | null }> {
  const kind = kindOf(handoff.requirement);
  return handoff.criteria.map((criterion) => ({ criterion, codes: kind ? checksFor(criterion, kind, file, handoff.criteria) : null }));
}

/**
 * The reviewer: run the real linter, tests and complexity analysis, and a check per acceptance
 * criterion; then approve with each criterion's evidence, or send the work back with the issues and
 * their severity. It approves only from results it saw.
 */
export function reviewerTurn(handoff: HandoffData, calls: readonly ToolCall[]): Decision {
  const file = handoff.submitted?.file ?? 'main.py';
  const planned = plan(handoff, file);
  const unverifiable = planned.find((entry) => entry.codes === null);
  if (unverifiable) return fail(`the offline model cannot verify ${unverifiable.criterion.id} (${unverifiable.criterion.criterion}) — ${REAL_MODEL_HINT}`);

  const lint = callsOf(calls, 'run_linter').at(-1);
  if (!lint) {
    return {
      text: `Reviewing ${file}: linter, tests, complexity and ${counted(planned.reduce((n, entry) => n + entry.codes!.length, 0), 'check')} for the criteria.`,
      calls: [
        { name: 'run_linter', input: { file } },
        { name: 'run_tests', input: { file } },
        { name: 'analyze_complexity', input: { file } },
        ...planned.flatMap((entry) => entry.codes!.map((code) => ({ name: 'run_check', input: { code, language: 'python' } }))),
      ],
    };
  }
  const refused = calls.at(-1);
  if (refused?.name === 'approve_code' && refused.result?.isError) return fail(`the offline reviewer's approval was refused: ${refused.result.content.slice(0, 300)}`);

  const tests = callsOf(calls, 'run_tests').at(-1);
  const complexity = callsOf(calls, 'analyze_complexity').at(-1);
  const checks = callsOf(calls, 'run_check');
  // A tool that could not start its interpreter (no python3 for the checks) says nothing of the work:
  // the review fails naming it, rather than sending the engineer to mend what is not broken.
  const missing = [lint, tests, complexity, ...checks].map(commandNotFound).find((name) => name !== null);
  if (missing) return fail(`the review's tools could not run: \`${missing}\` is not found on this machine (exit 127); ${installHint(missing)}`);
  const issues: Issue[] = [];
  for (const line of (lint.result?.content ?? '').split('\n')) {
    const match = /^\s*line (\d+) \[([^\]]+)\] (.+)$/.exec(line);
    if (match) issues.push({ text: `${file} line ${match[1]}: ${match[3]} [${match[2]}]`, severity: LINT_SEVERITY[match[2]!] ?? (/^TS\d+$/.test(match[2]!) ? 'blocker' : 'major') });
  }
  const testText = tests?.result?.content ?? '';
  if (!tests || tests.result?.isError || /\bFAIL\b/.test(testText.split('\n')[0] ?? '')) {
    issues.push({ text: `tests fail: ${testText.split('\n').slice(0, 6).join(' | ').slice(0, 300)}`, severity: 'blocker' });
  }
  for (const line of (complexity?.result?.content ?? '').split('\n')) {
    if (line.includes('(high)')) issues.push({ text: `too complex: ${line.trim().replace(/\s+\(high\)$/, '')}; split it into smaller functions`, severity: 'minor' });
  }
  // Checks ran in plan order; each result names its evidence id.
  const verdicts: Array<{ id: string; met: boolean; evidence: string }> = [];
  let index = 0;
  for (const entry of planned) {
    const results = entry.codes!.map(() => checks[index++]?.result);
    const ids = results.map((result) => /^(CHK\d+): (PASS|FAIL)/.exec(result?.content ?? '')).filter((m): m is RegExpExecArray => m !== null);
    const met = ids.length === results.length && ids.every((m) => m[2] === 'PASS');
    const summary = results.map((result) => (result?.content ?? 'not run').split('\n').find((l) => /^(OK|FAILED)/.test(l)) ?? 'no verdict').join('; ');
    verdicts.push({ id: entry.criterion.id, met, evidence: `${ids.map((m) => `${m[1]} ${m[2] === 'PASS' ? 'passed' : 'failed'}`).join(', ') || 'no check ran'}: ${summary}` });
    if (!met) issues.push({ text: `${entry.criterion.id} not met (${entry.criterion.criterion}): ${summary}`, severity: 'blocker', criterion: entry.criterion.id });
  }
  const blocking = issues.filter((issue) => issue.severity !== 'minor');
  if (blocking.length > 0) return { text: `Found ${counted(blocking.length, 'issue')} to fix.`, calls: [{ name: 'request_revision', input: { issues: blocking } }] };
  const first = (call: ToolCall | undefined) => (call?.result?.content ?? 'not run').split('\n')[0];
  const notes = issues.length ? ` Notes: ${issues.map((issue) => issue.text).join('; ')}.` : '';
  return {
    text: 'Every criterion is met.',
    calls: [
      {
        name: 'approve_code',
        input: { comment: `${first(lint)}; ${first(tests)}; ${verdicts.length} criteri${verdicts.length === 1 ? 'on' : 'a'} met by checks.${notes}`, criteria: verdicts },
      },
    ],
  };
}

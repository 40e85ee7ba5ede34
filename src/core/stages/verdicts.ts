import type { Artifacts, Criterion, CriterionVerdict, Issue, Report } from '../board/artifacts.js';

/**
 * The rules a verdict must meet, enforced by the runtime in the signal tools (not asked for in a
 * prompt). Pure functions over a review task's artifacts, so each rule is tested on its own.
 */

const short = (sha: string) => sha.slice(0, 12);

function reportGap(tool: string, report: Report | undefined, file: string, sha256: string): string | null {
  if (!report) return `${tool} has not been run in this review`;
  const seen = report.file === file ? report.sha256 : report.shas?.[file];
  if (seen === undefined) return `${tool} ran on ${[report.file, ...Object.keys(report.shas ?? {})].filter((f, i, all) => all.indexOf(f) === i).join(', ')}, not on the submitted ${file}`;
  if (seen !== sha256) return `${tool} ran on a different version of ${file} than the one submitted (sha256 ${short(sha256)}); run it again`;
  return null;
}

/**
 * What is missing before `approve_code` may end the pipeline approved; empty when nothing is. In this
 * review and for the submitted sha256: run_linter and run_tests were run, the tests passed, and every
 * criterion has a verdict that is met with evidence; cited checks (CHKn) exist, ran on that version and passed.
 */
export function approvalGaps(artifacts: Artifacts, verdicts: readonly CriterionVerdict[]): string[] {
  const gaps: string[] = [];
  const submitted = artifacts.submitted;
  if (!submitted) return ['nothing was submitted for this review'];
  const { file, sha256 } = submitted;
  const lint = reportGap('run_linter', artifacts.lint, file, sha256);
  if (lint) gaps.push(lint);
  const tests = reportGap('run_tests', artifacts.tests, file, sha256);
  if (tests) gaps.push(tests);
  else if (artifacts.tests?.ok !== true) gaps.push('run_tests failed: tests must pass before approval (request_revision instead)');

  const criteria: Criterion[] = artifacts.criteria ?? [];
  const known = new Set(criteria.map((c) => c.id));
  const checks = new Map((artifacts.checks ?? []).map((check) => [check.id, check]));
  for (const verdict of verdicts) {
    if (!known.has(verdict.id)) gaps.push(`${verdict.id} is not a criterion of this pipeline (criteria: ${[...known].join(', ') || 'none'})`);
  }
  for (const criterion of criteria) {
    const verdict = verdicts.find((v) => v.id === criterion.id);
    if (!verdict) {
      gaps.push(`${criterion.id} has no verdict: give {id: '${criterion.id}', met, evidence} (${criterion.criterion})`);
      continue;
    }
    if (!verdict.met) {
      gaps.push(`${criterion.id} is not met: request_revision instead`);
      continue;
    }
    if (!verdict.evidence.trim()) {
      gaps.push(`${criterion.id} has no evidence: cite the check (CHKn) or test output that shows it`);
      continue;
    }
    for (const cited of new Set(verdict.evidence.match(/\bCHK\d+\b/g) ?? [])) {
      const check = checks.get(cited);
      if (!check) gaps.push(`the evidence for ${criterion.id} cites ${cited}, which was never run in this review`);
      else if (!check.ok) gaps.push(`the evidence for ${criterion.id} cites ${cited}, which failed (exit ${check.exitCode ?? 'none'})`);
      else if (check.sha256 !== sha256) gaps.push(`the evidence for ${criterion.id} cites ${cited}, which ran on a different version of ${file}`);
    }
  }
  return gaps;
}

/** Why a revision request is no reason to send work back, or null when it is one. */
export function revisionRefusal(issues: readonly Issue[]): string | null {
  if (issues.length > 0 && issues.every((issue) => issue.severity === 'minor')) {
    return 'Every issue is minor: that is no reason to send the work back. Approve with notes instead (approve_code, mention them in the comment).';
  }
  return null;
}

/** An issue's identity across reviews: line numbers and spacing aside. */
export function issueKey(issue: Issue): string {
  return issue.text.toLowerCase().replace(/\d+/g, '#').replace(/[^a-z#]+/g, ' ').trim();
}

/** The first blocker of `current` that the previous review already requested, or null. */
export function repeatedBlocker(previous: readonly Issue[], current: readonly Issue[]): Issue | null {
  const before = new Set(previous.filter((issue) => issue.severity === 'blocker').map(issueKey));
  return current.find((issue) => issue.severity === 'blocker' && before.has(issueKey(issue))) ?? null;
}

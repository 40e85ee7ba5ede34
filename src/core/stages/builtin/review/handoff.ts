import { cutText } from '../../../sizes.js';
import { artifact, formatIssue, HANDOFF_LIMITS, type HandoffData, requirementsSection } from '../../handoff-data.js';

/** A review's handoff: the requirement, the submitted file (`content`), the change, and on a re-review what was asked before. */
export function reviewHandoff(data: HandoffData, content?: string): string {
  const lines = requirementsSection(data);
  const submitted = data.submitted;
  if (submitted) {
    const shown = cutText(content ?? '', HANDOFF_LIMITS.file, `the whole is in ${submitted.file} in the workspace`);
    const others = Object.keys(submitted.files ?? {}).filter((file) => file !== submitted.file);
    lines.push('', `Submitted file: ${submitted.file} (revision ${submitted.revision}, sha256 ${submitted.sha256.slice(0, 12)})`);
    if (others.length) lines.push(`Other files in the workspace: ${others.join(', ')}`);
    lines.push('', '```', shown, '```');
  }
  if (data.change) {
    const files = data.change.files.map((file) => `${file.status} ${file.path}`);
    lines.push('', `Changes on ${data.git?.branch ?? 'the branch'} against ${data.change.base.slice(0, 12)} (${files.length} file${files.length === 1 ? '' : 's'}: ${files.join(', ') || 'none'}):`);
    lines.push('```diff', artifact(data.change.diff.trimEnd(), HANDOFF_LIMITS.diff, 'change.diff') || '(no changes)', '```');
    lines.push('run_linter, run_tests and analyze_complexity look at the changed files when you name none.');
  }
  if (data.revision > 0) {
    lines.push('', `The previous review (revision ${data.revision - 1}) asked for:`, ...data.previousIssues.map((issue) => artifact(formatIssue(issue), HANDOFF_LIMITS.entry, 'previousIssues')));
    lines.push('', `Changes since revision ${data.revision - 1}:`, '```diff', artifact(data.diff ?? '', HANDOFF_LIMITS.diff, 'diff') || '(no changes)', '```');
    lines.push('', 'Check first whether those issues are fixed; do not raise new minor points that were there before.');
  }
  lines.push(
    '',
    'Review it: run_linter and run_tests are required; run_check runs checks you write for the criteria. Then approve_code with a verdict and evidence for every criterion, or request_revision with issues and their severity.',
  );
  return lines.join('\n');
}

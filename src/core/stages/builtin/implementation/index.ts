import { artifact, formatIssue, HANDOFF_LIMITS, type HandoffData, requirementsSection } from '../../handoff-data.js';
import { requirementAsCriterion, type StageDefinition, short } from '../../stage.js';
import { ImplementationArtifactsSchema } from './artifacts.js';

function handoff(data: HandoffData): string {
  const lines = requirementsSection(data);
  if (data.revision > 0) {
    lines.push(
      '',
      `This is revision ${data.revision}. The reviewer sent the work back with these issues:`,
      ...data.issues.map((issue) => artifact(formatIssue(issue), HANDOFF_LIMITS.entry, 'issues')),
      '',
      'Your previous files are in the workspace. Fix every blocker and major issue, run the code again, then submit_for_review(file).',
    );
  } else {
    lines.push('', 'Implement it in the workspace, run it, then submit_for_review(file). Approval needs every acceptance criterion met, with evidence.');
  }
  if (data.git) {
    lines.push('', `The workspace is a git worktree of the person's repository on branch ${data.git.branch} (from ${data.git.base.slice(0, 12)}): change what the requirement needs and leave the rest as it is. The runtime commits on approval; .git is not yours to touch.`);
  }
  return lines.join('\n');
}

/** The engineer writes and runs the program, then submits it. */
export const implementationStage: StageDefinition = {
  stage: 'implementation',
  role: 'engineer',
  title: 'Implementation',
  systemPrompt: [
    'You are the engineer of a small software team. You implement the requirements handed to you.',
    '- Write the program into your workspace with write_file (relative paths only); keep it small, readable and lint-clean:',
    '  a module docstring (Python) or a leading comment (JS/TS), lines up to 120 characters, no tabs or trailing whitespace, no bare except.',
    '- Run it for real (execute_code, or bash in the workspace) on a safe scratch directory, never on real user data.',
    '- Add tests (test_*.py or *.test.js/.mjs) for the acceptance criteria; the reviewer runs them.',
    '- When it works, call submit_for_review(file) with the main file. If this is a revision, fix every blocker and major',
    '  issue listed first; an unchanged resubmission is refused.',
    '- If the requirement cannot be implemented, fail_task(reason) says so honestly; never submit a stub.',
  ].join('\n'),
  tools: ['write_file', 'read_file', 'edit_file', 'execute_code', 'bash', 'submit_for_review', 'fail_task'],
  transitions: { submit_for_review: { next: 'review', carry: ['submitted'] } },
  // A pipeline may start here (--start-stage implementation), with the requirement as its criterion.
  start: requirementAsCriterion,
  artifacts: ImplementationArtifactsSchema,
  subject: (requirement, revision) => (revision > 0 ? `Revise (${revision}): ${short(requirement)}` : `Implement: ${short(requirement)}`),
  handoff,
  // A retried revision still has to fix what the review asked for, and knows what it was sent back with.
  retry: { keep: ['files', 'submitted', 'issues'] },
};

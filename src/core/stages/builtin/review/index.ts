import type { Artifacts } from '../../../board/artifacts.js';
import type { PrepareContext, Prepared, SendBackContext, StageDefinition } from '../../stage.js';
import { repeatedBlocker } from '../../verdicts.js';
import { ReviewArtifactsSchema } from './artifacts.js';
import { reviewHandoff } from './handoff.js';
import { counted } from '../../../words.js';

/**
 * What a review needs besides what it carries: the submitted file's content (shown, not stored), the
 * branch's change in repository mode, and on a re-review the issues it asked for and the diff since.
 */
async function prepare({ artifacts, workspace, sentBack, effects }: PrepareContext): Promise<Prepared> {
  const submitted = artifacts.submitted;
  if (!submitted) return {};
  const content = effects.readSubmission(workspace, submitted.file);
  const added: Artifacts = {};
  if (artifacts.git) added.change = await effects.change(artifacts.git);
  if (sentBack) {
    added.previousIssues = sentBack.artifacts.issues ?? [];
    added.diff = effects.diff(sentBack.artifacts.submitted?.files ?? {}, submitted.files ?? {});
  }
  return { artifacts: added, content };
}

/** A review that repeats a blocker it already asked for is not converging; past max_revisions it stops too. */
function sendBack({ artifacts, task, previous, maxRevisions }: SendBackContext): string | null {
  const issues = artifacts.issues ?? [];
  const repeated = previous ? repeatedBlocker(previous.artifacts.issues ?? [], issues) : null;
  if (repeated) return `not converging: ${repeated.text}`;
  if (task.revision + 1 > maxRevisions) return `max_revisions (${maxRevisions}) reached; the reviewer still found ${counted(issues.length, 'issue')}`;
  return null;
}

/** The reviewer checks the submission against the criteria, with evidence, and approves or sends it back. */
export const reviewStage: StageDefinition = {
  stage: 'review',
  role: 'reviewer',
  title: 'Code review',
  systemPrompt: [
    'You are the code reviewer of a small software team. You review the file submitted by the engineer.',
    '- Run run_linter and run_tests on it (both required before approval), analyze_complexity, and read it with read_file.',
    '- For each acceptance criterion, write a short check with run_check(code): a script that runs or imports the submitted',
    '  program on its own scratch data and exits non-zero when the criterion is not met. Its result is evidence CHK1, CHK2, ….',
    '- approve_code(comment, criteria) only when every criterion is met: give {id, met: true, evidence} for each, citing',
    '  the check or test that shows it. The runtime refuses an approval without that evidence.',
    '- Otherwise request_revision(issues) with {text, severity: blocker|major|minor, criterion?} per issue. Minor issues',
    '  alone are no reason to send work back: approve with notes instead. On a re-review, check the previous issues first.',
    '- Judge from the tools\' real output; do not invent problems.',
  ].join('\n'),
  tools: ['run_linter', 'run_tests', 'analyze_complexity', 'run_check', 'read_file', 'request_revision', 'approve_code', 'fail_task'],
  transitions: {
    request_revision: { next: 'implementation', revise: true, carry: ['issues', 'submitted'] },
    approve_code: { next: 'approved' },
  },
  artifacts: ReviewArtifactsSchema,
  subject: (_requirement, revision, artifacts) => `Review ${artifacts.submitted?.file ?? 'submission'} (revision ${revision})`,
  handoff: reviewHandoff,
  prepare,
  sendBack,
  // Its verdicts and reports belong to the failed attempt; what it was handed is handed again.
  retry: { keep: ['submitted', 'previousIssues', 'diff', 'change'] },
  // Boards written before `signal` was recorded: the verdict says which way it went.
  inferSignal: (task) => (task.artifacts.verdict === 'approved' ? 'approve_code' : 'request_revision'),
  rules: ['approve_code needs run_linter + run_tests on the submitted version, passing tests, and every criterion met with evidence'],
};

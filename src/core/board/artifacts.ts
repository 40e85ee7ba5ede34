import { z } from 'zod';

/**
 * What the stages record on a task (`task.artifacts`). Every key is optional: each stage adds its own,
 * and the runtime copies what the next stage needs into the successor. Unknown keys are kept, so a
 * hand-edited or newer board still reads.
 */

export const QaEntrySchema = z.object({ question: z.string(), answer: z.string(), by: z.string() });
export type QaEntry = z.infer<typeof QaEntrySchema>;

/** An acceptance criterion, numbered by the runtime: AC1, AC2, … */
export const CriterionSchema = z.object({
  id: z.string().regex(/^AC\d+$/),
  criterion: z.string().min(1),
  verify: z.string().min(1),
});
export type Criterion = z.infer<typeof CriterionSchema>;

export const SEVERITIES = ['blocker', 'major', 'minor'] as const;
export type Severity = (typeof SEVERITIES)[number];

export const IssueSchema = z.object({
  text: z.string().min(1),
  severity: z.enum(SEVERITIES),
  criterion: z.string().optional(),
});
export type Issue = z.infer<typeof IssueSchema>;

/** Boards written before severities held plain strings: they read as `major`. */
const StoredIssueSchema = z.union([IssueSchema, z.string().min(1).transform((text): Issue => ({ text, severity: 'major' }))]);

export const FileArtifactSchema = z.object({ path: z.string(), sha256: z.string(), bytes: z.number().int().nonnegative() });
export type FileArtifact = z.infer<typeof FileArtifactSchema>;

/** What the engineer submitted: the main file and the hash of every file of the workspace then. */
export const SubmittedSchema = z.object({
  file: z.string(),
  sha256: z.string(),
  revision: z.number().int().nonnegative(),
  /** path → sha256 of every file in the workspace at submission (absent on older boards). */
  files: z.record(z.string(), z.string()).optional(),
});
export type Submitted = z.infer<typeof SubmittedSchema>;

/** A check the reviewer wrote and ran (`run_check`), recorded as evidence CHK1, CHK2, … */
export const CheckSchema = z.object({
  id: z.string().regex(/^CHK\d+$/),
  language: z.string(),
  code: z.string(),
  ok: z.boolean(),
  exitCode: z.number().int().nullable(),
  output: z.string(),
  /** sha256 of the submitted file the check ran against. */
  sha256: z.string(),
  ms: z.number().nonnegative(),
});
export type Check = z.infer<typeof CheckSchema>;

export const CriterionVerdictSchema = z.object({
  id: z.string(),
  met: z.boolean(),
  evidence: z.string(),
});
export type CriterionVerdict = z.infer<typeof CriterionVerdictSchema>;

/** A report of a review tool, bound to the hash of the file it looked at. */
const ReportSchema = z.looseObject({
  file: z.string(),
  ok: z.boolean().optional(),
  sha256: z.string().optional(),
  /** A report over several files: path → sha256 of each as it was looked at (`file` is one of them). */
  shas: z.record(z.string(), z.string()).optional(),
});
export type Report = z.infer<typeof ReportSchema>;

/** A pipeline on the person's repository: its worktree and branch, and what became of them. */
export const GitInfoSchema = z.object({
  /** Top level of the person's repository. */
  repo: z.string(),
  branch: z.string(),
  /** The commit HEAD pointed to when the pipeline was posted: the branch starts there. */
  base: z.string(),
  /** Absolute path of the pipeline's worktree. */
  worktree: z.string(),
  /** The commit made on approval. */
  commit: z.string().optional(),
});
export type GitInfo = z.infer<typeof GitInfoSchema>;

/** What the worktree changed against the base commit, as handed to a review. */
export const ChangeSchema = z.object({
  base: z.string(),
  files: z.array(z.object({ path: z.string(), status: z.string() })),
  diff: z.string(),
});
export type Change = z.infer<typeof ChangeSchema>;

export const ArtifactsSchema = z.looseObject({
  /** The person's requirement, as posted (every task of a pipeline carries it). */
  requirement: z.string().optional(),
  requirements: z.record(z.string(), z.string()).optional(),
  summary: z.string().optional(),
  qa: z.array(QaEntrySchema).optional(),
  criteria: z.array(CriterionSchema).optional(),
  questionsRefused: z.number().int().nonnegative().optional(),
  files: z.array(FileArtifactSchema).optional(),
  submitted: SubmittedSchema.optional(),
  lint: ReportSchema.optional(),
  tests: ReportSchema.optional(),
  complexity: ReportSchema.optional(),
  checks: z.array(CheckSchema).optional(),
  verdict: z.enum(['approved', 'changes requested']).optional(),
  comment: z.string().optional(),
  issues: z.array(StoredIssueSchema).optional(),
  /** The reviewer's verdict per criterion, given with approve_code. */
  criteriaVerdicts: z.array(CriterionVerdictSchema).optional(),
  /** On a re-review: the issues of the review that sent the work back. */
  previousIssues: z.array(StoredIssueSchema).optional(),
  /** On a re-review: the unified diff of the workspace against the revision sent back (cut at a limit). */
  diff: z.string().optional(),
  /** The signal tool that ended the task (complete_requirements_analysis, submit_for_review, …). */
  signal: z.string().optional(),
  /** A failed or cancelled task that was retried: the task that took its place (and back). */
  retriedBy: z.number().int().positive().optional(),
  retryOf: z.number().int().positive().optional(),
  /** The task this one was posted from. */
  from: z.number().int().positive().optional(),
  requirePlan: z.boolean().optional(),
  /** Reports of the stages defined in autoteam.config.json (complete_stage), by stage. */
  reports: z.record(z.string(), z.string()).optional(),
  /** Set on the task whose signal approved the pipeline (the last stage's). */
  final: z.boolean().optional(),
  /** Repository mode: the pipeline's branch and worktree (carried by every task of the pipeline). */
  git: GitInfoSchema.optional(),
  /** Review in repository mode: the change against the base commit. */
  change: ChangeSchema.optional(),
  /** The person's decision on an approved branch: merged (into which branch, as which commit) or discarded. */
  outcome: z.object({ action: z.enum(['merged', 'discarded']), into: z.string().optional(), commit: z.string().optional(), by: z.string() }).optional(),
});
export type Artifacts = z.infer<typeof ArtifactsSchema>;

import { z } from 'zod';

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
export const ReportSchema = z.looseObject({
  file: z.string(),
  ok: z.boolean().optional(),
  sha256: z.string().optional(),
  /** A report over several files: path → sha256 of each as it was looked at (`file` is one of them). */
  shas: z.record(z.string(), z.string()).optional(),
});
export type Report = z.infer<typeof ReportSchema>;

/** What the worktree changed against the base commit, as handed to a review. */
export const ChangeSchema = z.object({
  base: z.string(),
  files: z.array(z.object({ path: z.string(), status: z.string() })),
  diff: z.string(),
});
export type Change = z.infer<typeof ChangeSchema>;

/** What a review task records: its tools' reports and checks, its verdict, and what it was handed at post time. */
export const ReviewArtifactsSchema = z.object({
  lint: ReportSchema.optional(),
  tests: ReportSchema.optional(),
  complexity: ReportSchema.optional(),
  checks: z.array(CheckSchema).optional(),
  verdict: z.enum(['approved', 'changes requested']).optional(),
  comment: z.string().optional(),
  /** The issues of a revision request (carried to the implementation it sends back). */
  issues: z.array(StoredIssueSchema).optional(),
  /** The reviewer's verdict per criterion, given with approve_code. */
  criteriaVerdicts: z.array(CriterionVerdictSchema).optional(),
  /** On a re-review: the issues of the review that sent the work back. */
  previousIssues: z.array(StoredIssueSchema).optional(),
  /** On a re-review: the unified diff of the workspace against the revision sent back (cut at a limit). */
  diff: z.string().optional(),
  /** In repository mode: the change against the base commit. */
  change: ChangeSchema.optional(),
});

import { z } from 'zod';
import { ImplementationArtifactsSchema } from '../stages/builtin/implementation/artifacts.js';
import { RequirementsArtifactsSchema } from '../stages/builtin/requirements/artifacts.js';
import { ReviewArtifactsSchema } from '../stages/builtin/review/artifacts.js';
import { PipelineDataSchema } from '../stages/pipeline-data.js';

/**
 * What a task records (`task.artifacts`). The runtime's own keys are defined here; the data a
 * pipeline carries and each built-in stage's artifacts have their schemas in the stage layer
 * (stages/pipeline-data.ts, stages/builtin/<stage>/artifacts.ts), composed below into one object
 * of optional keys: the stored layout is the same flat JSON object as ever. Unknown keys are kept,
 * so a hand-edited or newer board, or a configured stage's own keys, still read.
 */

export type { QaEntry, Criterion } from '../stages/pipeline-data.js';
export { QaEntrySchema, CriterionSchema } from '../stages/pipeline-data.js';
export type { FileArtifact, Submitted } from '../stages/builtin/implementation/artifacts.js';
export { FileArtifactSchema, SubmittedSchema } from '../stages/builtin/implementation/artifacts.js';
export type { Severity, Issue, Check, CriterionVerdict, Report, Change } from '../stages/builtin/review/artifacts.js';
export { SEVERITIES, IssueSchema, CheckSchema, CriterionVerdictSchema, ChangeSchema } from '../stages/builtin/review/artifacts.js';

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
  /** The branch HEAD was on when the pipeline was posted: what the merge queue merges it into (absent on older boards: the person's current branch). */
  baseBranch: z.string().optional(),
  /**
   * `repository.remote`: the remote the branch lives on (its URL, credentials redacted). `repo` and
   * `worktree` are then the poster's; every folder works in its own clone (stages/workspace.ts).
   */
  remote: z.string().optional(),
  /** On a remote: the commit of the branch the next task starts from (the base, then each submission, then the approval). */
  head: z.string().optional(),
});
export type GitInfo = z.infer<typeof GitInfoSchema>;

/** An approval with nothing to commit (the reviewed tree was the base's): its commit is the base itself. */
export function committedNothing(git: { base: string; commit?: string | null }): boolean {
  return git.commit === git.base;
}

/** The runtime's own keys: where a task came from, how it ended, its retries, its workspace. */
export const RuntimeArtifactsSchema = z.object({
  /** The person's requirement, as posted (every task of a pipeline carries it). */
  requirement: z.string().optional(),
  /** The signal tool that ended the task (complete_requirements_analysis, submit_for_review, …). */
  signal: z.string().optional(),
  /** A failed or cancelled task that was retried: the task that took its place (and back). */
  retriedBy: z.number().int().positive().optional(),
  retryOf: z.number().int().positive().optional(),
  /** The task this one was posted from. */
  from: z.number().int().positive().optional(),
  requirePlan: z.boolean().optional(),
  /** Set on the task whose signal approved the pipeline (the last stage's). */
  final: z.boolean().optional(),
  /** Repository mode: the pipeline's branch and worktree (carried by every task of the pipeline). */
  git: GitInfoSchema.optional(),
  /**
   * The person's decision on an approved branch: merged (into which branch, as which commit; `noChange`:
   * its change was already there, so the merge added no commit) or discarded.
   */
  outcome: z.object({ action: z.enum(['merged', 'discarded']), into: z.string().optional(), commit: z.string().optional(), noChange: z.boolean().optional(), by: z.string() }).optional(),
  /** On an approving task the merge queue sent back: the signal it had approved with, and why it was sent back. */
  mergeSentBack: z.object({ signal: z.string(), reason: z.string(), by: z.string(), commit: z.string().optional() }).optional(),
});

/** The runtime keys a retried task keeps (its own ending — signal, final, retriedBy — goes). */
export const RETRY_RUNTIME_KEYS = ['requirement', 'from', 'requirePlan', 'git'] as const;

export const ArtifactsSchema = z.looseObject({
  ...RuntimeArtifactsSchema.shape,
  ...PipelineDataSchema.shape,
  ...RequirementsArtifactsSchema.shape,
  ...ImplementationArtifactsSchema.shape,
  ...ReviewArtifactsSchema.shape,
});
export type Artifacts = z.infer<typeof ArtifactsSchema>;

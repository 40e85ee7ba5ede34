import { z } from 'zod';

/**
 * What a pipeline carries from stage to stage, whatever the stages are: the analysis of the
 * requirement (requirements, Q&A, criteria, summary) and the reports of configured stages. Every
 * task of a pipeline holds these keys as the last one left them.
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

export const PipelineDataSchema = z.object({
  requirements: z.record(z.string(), z.string()).optional(),
  summary: z.string().optional(),
  qa: z.array(QaEntrySchema).optional(),
  criteria: z.array(CriterionSchema).optional(),
  /** Reports of the stages defined in autoteam.config.json (complete_stage), by stage. */
  reports: z.record(z.string(), z.string()).optional(),
});
export type PipelineData = z.infer<typeof PipelineDataSchema>;

/** The keys every task of a pipeline carries forward (and a retry keeps). */
export const PIPELINE_KEYS: readonly string[] = Object.keys(PipelineDataSchema.shape);

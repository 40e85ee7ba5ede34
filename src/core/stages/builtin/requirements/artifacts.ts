import { z } from 'zod';

/** What the analyst's tools record on a requirements task besides the pipeline's data (requirements, qa, criteria, summary). */
export const RequirementsArtifactsSchema = z.object({
  /** Questions refused past max_questions. */
  questionsRefused: z.number().int().nonnegative().optional(),
});

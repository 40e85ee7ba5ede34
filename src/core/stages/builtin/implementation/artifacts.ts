import { z } from 'zod';

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

/** What the engineer's tools record on an implementation task. */
export const ImplementationArtifactsSchema = z.object({
  files: z.array(FileArtifactSchema).optional(),
  submitted: SubmittedSchema.optional(),
});

import type { Change, GitInfo } from '../board/artifacts.js';
import type { Repository } from '../git/worktree.js';
import type { Manifest } from './submission.js';

/**
 * What the pipeline does to the world outside the board: the engine decides, these act. The real
 * ones (workspace-effects.ts) touch the file system and git; a test passes its own.
 */
export interface PipelineEffects {
  /** A new pipeline's own worktree and branch on `repository`, from its HEAD as it is now. */
  createWorkspace(repository: Repository, pipeline: number, requirement: string): Promise<GitInfo>;
  /** The content of a submitted file, `file` relative to the workspace (confined to it). */
  readSubmission(workspace: string, file: string): string;
  /** What the pipeline's worktree changed against its base commit. */
  change(git: GitInfo): Promise<Change>;
  /** The unified diff between two submissions' manifests (path → sha256), from the board's kept files. */
  diff(before: Manifest, after: Manifest): string;
  /** Commits the worktree on its branch; null when nothing changed against the base. */
  commit(git: GitInfo, message: string, author: string): Promise<string | null>;
}

import fs from 'node:fs';
import path from 'node:path';
import { resolveInWorkspace } from '../exec/sandbox-path.js';
import { branchName, commitWorktree, createWorktree, worktreeChange } from '../git/worktree.js';
import { currentBranch } from '../git/rebase.js';
import type { PipelineEffects } from './effects.js';
import { manifestDiff } from './submission.js';

/** The pipeline's effects on the real file system and git, for a board in `rootDir`. */
export function workspaceEffects(rootDir: string): PipelineEffects {
  return {
    async createWorkspace(repository, pipeline, requirement) {
      // Its own worktree and branch: parallel pipelines never share files.
      const worktree = path.join(rootDir, '.autoteam', 'worktrees', String(pipeline));
      const baseBranch = await currentBranch(repository.top);
      const { branch, base } = await createWorktree(repository.top, worktree, branchName(pipeline, requirement));
      return { repo: repository.top, branch, base, worktree, ...(baseBranch ? { baseBranch } : {}) };
    },
    readSubmission: (workspace, file) => fs.readFileSync(resolveInWorkspace(workspace, file), 'utf8'),
    change: (git) => worktreeChange(git.worktree, git.base),
    diff: (before, after) => manifestDiff(rootDir, before, after),
    commit: (git, message, author) => commitWorktree(git.worktree, git.base, message, author),
  };
}

import fs from 'node:fs';
import path from 'node:path';
import { resolveInWorkspace } from '../exec/sandbox-path.js';
import { approveRemote, createRemoteBranch } from '../git/remote-branch.js';
import { branchName, commitWorktree, createWorktree, worktreeChange } from '../git/worktree.js';
import { currentBranch } from '../git/rebase.js';
import type { PipelineEffects } from './effects.js';
import { manifestDiff } from './submission.js';
import { localGit } from './workspace.js';

/** The pipeline's effects on the real file system and git, for a board in `rootDir`. */
export function workspaceEffects(rootDir: string): PipelineEffects {
  return {
    async createWorkspace(repository, pipeline, requirement) {
      // On a remote: a branch pushed there, and this folder's worktree of it.
      if (repository.remote) return createRemoteBranch(rootDir, repository, pipeline, requirement);
      // Its own worktree and branch: parallel pipelines never share files.
      const worktree = path.join(rootDir, '.autoteam', 'worktrees', String(pipeline));
      const baseBranch = await currentBranch(repository.top);
      const { branch, base } = await createWorktree(repository.top, worktree, branchName(pipeline, requirement));
      return { repo: repository.top, branch, base, worktree, ...(baseBranch ? { baseBranch } : {}) };
    },
    readSubmission: (workspace, file) => fs.readFileSync(resolveInWorkspace(workspace, file), 'utf8'),
    change: (git) => worktreeChange(localGit(rootDir, git).worktree, git.base),
    diff: (before, after) => manifestDiff(rootDir, before, after),
    // On a remote the approval commit is the reviewed commit's tree, pushed; the worktree is not read.
    commit: (git, message, author) => (git.remote ? approveRemote(rootDir, git, message, author) : commitWorktree(git.worktree, git.base, message, author)),
  };
}

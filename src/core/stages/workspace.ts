import path from 'node:path';
import type { GitInfo } from '../board/artifacts.js';
import type { Task } from '../board/schemas.js';
import { remoteClone, remoteWorktree } from '../git/remote-url.js';

/**
 * A pipeline's git record as this folder works it: on a remote (`repository.remote`) the clone and
 * the worktree are this folder's own, whoever posted the pipeline; otherwise the record as it is.
 */
export function localGit(rootDir: string, git: GitInfo): GitInfo {
  if (!git.remote) return git;
  return { ...git, repo: remoteClone(rootDir, git.remote), worktree: remoteWorktree(rootDir, git.remote, git.branch) };
}

/** Where a task's files live: its pipeline's worktree on the person's repository (or this folder's of the remote), or `workspace/<pipeline>`. */
export function taskWorkspace(rootDir: string, task: Pick<Task, 'pipeline' | 'artifacts'> | null): string {
  if (task?.artifacts.git) return localGit(rootDir, task.artifacts.git).worktree;
  return path.join(rootDir, 'workspace', task?.pipeline ? String(task.pipeline) : 'general');
}

import path from 'node:path';
import type { Task } from '../board/schemas.js';

/** Where a task's files live: its pipeline's worktree on the person's repository, or `workspace/<pipeline>`. */
export function taskWorkspace(rootDir: string, task: Pick<Task, 'pipeline' | 'artifacts'> | null): string {
  if (task?.artifacts.git) return task.artifacts.git.worktree;
  return path.join(rootDir, 'workspace', task?.pipeline ? String(task.pipeline) : 'general');
}

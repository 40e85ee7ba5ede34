import { isPostgresUrl } from './pg/url.js';
import { TaskBoard } from './task-board.js';
import type { TaskStore } from './task-rules.js';
import type { TaskBoardOptions } from './task-types.js';

export interface OpenedTaskStore extends TaskStore {
  close?(): Promise<void>;
}

/**
 * The task store at `location`: a `postgres://` URL opens the PostgreSQL board (connecting and
 * migrating its schema), anything else is a directory holding the file board.
 */
export async function openTaskStore(location: string, options: Pick<TaskBoardOptions, 'leaseMs'> & { poolSize?: number } = {}): Promise<OpenedTaskStore> {
  if (isPostgresUrl(location)) {
    // Loaded only when used: the file board never pays for the driver.
    const { PgTaskBoard } = await import('./pg/pg-task-board.js');
    return PgTaskBoard.open(location, options);
  }
  return new TaskBoard(location, options);
}

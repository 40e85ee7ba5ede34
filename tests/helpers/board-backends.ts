import fs from 'node:fs';
import { afterEach } from 'vitest';
import { type Board, type OpenBoardOptions, openBoard } from '../../src/core/board/board.js';
import { isPostgresUrl } from '../../src/core/board/pg/url.js';
import { tempRoot } from './board-spawn.js';
import { freshDatabase, postgresBin } from './postgres.js';

/**
 * The two backends a test file runs its cases on — a folder, and a fresh database when PostgreSQL's
 * binaries are there (call usePostgres() in the file too) — with the folders made and the boards
 * opened by a test removed and closed after it.
 */
export function boardBackends(prefix?: string) {
  const boards: Board[] = [];
  const dirs: string[] = [];
  afterEach(async () => {
    for (const board of boards.splice(0)) await board.close();
    for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
  });
  /** A folder of its own, removed after the test. */
  const dir = (): string => {
    const made = tempRoot(prefix);
    dirs.push(made);
    return made;
  };
  return {
    dir,
    backends: [
      { name: 'file board', location: async () => dir() },
      ...(postgresBin ? [{ name: 'postgres board', location: freshDatabase }] : []),
    ],
    /** The board at `location`, closed after the test (a database's local folder: `rootDir`, or a new one). */
    open: async (location: string, options: OpenBoardOptions & { rootDir?: string } = {}): Promise<Board> => {
      const { rootDir, ...rest } = options;
      const board = await openBoard(location, rootDir ?? (isPostgresUrl(location) ? dir() : location), rest);
      boards.push(board);
      return board;
    },
  };
}

/**
 * Which refused writes end a teammate's attempt at once (the board's own storage) and which stay a
 * tool error for the model to read (its workspace, a repository worktree beside the board's files),
 * on errors shaped as node's and on one the filesystem raised.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { boardWriteRefused } from '../../src/core/board/atomic-io.js';
import { BoardFileError } from '../../src/core/errors.js';

const refused = (code: string, file: string) => Object.assign(new Error(`${code}: ${file}`), { code, path: file });

describe('boardWriteRefused', () => {
  const root = path.join(os.tmpdir(), 'board');

  it("is true for a write the board's tasks, team or blobs refused", () => {
    for (const file of ['.tasks/task_1.json.1.1.abcdef12.tmp', '.team/config.json', '.team/inbox/eng.jsonl', '.autoteam/blobs/ab12']) {
      for (const code of ['EACCES', 'EPERM', 'EROFS', 'ENOSPC', 'EDQUOT']) expect(boardWriteRefused(refused(code, path.join(root, file)), root), `${code} ${file}`).toBe(true);
    }
  });

  it("is true for a board file broken by hand (a team config cut short, a folder in an inbox's place), false for one of the agents'", () => {
    expect(boardWriteRefused(new BoardFileError(path.join(root, '.team', 'config.json'), 'not valid JSON'), root)).toBe(true);
    expect(boardWriteRefused(new BoardFileError(path.join(root, '.team', 'inbox', 'lead.jsonl'), 'is a folder, not an inbox file'), root)).toBe(true);
    expect(boardWriteRefused(new BoardFileError(path.join(root, 'workspace', '1', 'data.json'), 'not valid JSON'), root)).toBe(false);
  });

  it("is false for the agents' own files, other errors, and errors with no path", () => {
    expect(boardWriteRefused(refused('EACCES', path.join(root, 'workspace', '1', 'app.py')), root)).toBe(false);
    expect(boardWriteRefused(refused('EACCES', path.join(root, '.autoteam', 'worktrees', '1', 'app.py')), root)).toBe(false);
    expect(boardWriteRefused(refused('EACCES', '/etc/passwd'), root)).toBe(false);
    expect(boardWriteRefused(refused('ENOENT', path.join(root, '.tasks', 'task_1.json')), root)).toBe(false);
    expect(boardWriteRefused(new Error('EACCES'), root)).toBe(false);
    expect(boardWriteRefused(null, root)).toBe(false);
  });

  it('reads the code and path of a real refused write', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-refused-'));
    try {
      fs.mkdirSync(path.join(dir, '.tasks'));
      fs.writeFileSync(path.join(dir, '.tasks', 'task_1.json'), '{}');
      // A file where a folder should be: the write into it fails with ENOTDIR, which is no refusal.
      let error: unknown = null;
      try {
        fs.writeFileSync(path.join(dir, '.tasks', 'task_1.json', 'x'), '');
      } catch (caught) {
        error = caught;
      }
      expect((error as NodeJS.ErrnoException).code).toBe('ENOTDIR');
      expect(boardWriteRefused(error, dir)).toBe(false);
      expect(boardWriteRefused(Object.assign(error as object, { code: 'EACCES' }), dir)).toBe(true);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

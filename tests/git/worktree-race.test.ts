/**
 * Pipelines posted at once on one repository each get a worktree: `git worktree add` reads every
 * registered worktree's files as it adds one, and fails on an entry another add is still writing.
 * Real git, twelve adds at once in one process.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createWorktree } from '../../src/core/git/worktree.js';
import { firstCommit, personGit } from '../helpers/person-git.js';

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) fs.rmSync(root, { recursive: true, force: true });
});

describe('worktrees made at once', () => {
  it('twelve pipelines posted together each get their worktree and branch', { timeout: 60_000 }, async () => {
    const repo = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-adds-')));
    roots.push(repo);
    firstCommit(repo);
    const made = await Promise.all(Array.from({ length: 12 }, (_, i) => createWorktree(repo, path.join(repo, '.autoteam', 'worktrees', String(i + 1)), `autoteam/${i + 1}-x`)));
    expect(made.map((entry) => entry.branch)).toEqual(Array.from({ length: 12 }, (_, i) => `autoteam/${i + 1}-x`));
    expect(personGit(repo, 'worktree', 'list').split('\n')).toHaveLength(13);
  });
});

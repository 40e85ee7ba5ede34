/** What a session says of the repository it works on as it opens it (openRepository), with real git. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openRepository } from '../../src/core/lead/repository.js';
import { firstCommit, personGit as git } from '../helpers/person-git.js';

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) fs.rmSync(root, { recursive: true, force: true });
});

async function said(repo: string): Promise<string[]> {
  const notices: string[] = [];
  await openRepository(undefined, repo, (text) => notices.push(text));
  return notices;
}

describe('openRepository', () => {
  it('says at the start that a detached HEAD leaves the pipelines no branch to merge into; on a branch, says nothing of it', async () => {
    const repo = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-notices-')));
    roots.push(repo);
    firstCommit(repo);
    expect((await said(repo)).filter((text) => /detached/.test(text))).toEqual([]);
    git(repo, 'checkout', '-q', '--detach', 'HEAD');
    const head = git(repo, 'rev-parse', '--short=7', 'HEAD');
    expect((await said(repo)).filter((text) => /detached/.test(text))).toEqual([
      expect.stringMatching(/\(detached HEAD at [0-9a-f]{7}\): each pipeline works in its own worktree/),
      `HEAD is detached: pipelines start from ${head}, and their work is merged into a branch, so check one out before merging (autoteam merge, /merge, the merge queue)`,
    ]);
  });
});

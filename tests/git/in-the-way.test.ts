/**
 * What a merge into the person's checkout would write over: their untracked or ignored files where the
 * change adds a path — never what the checkout tracks (git's to replace), a folder turned into a file included.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { untrackedInTheWay } from '../../src/core/git/in-the-way.js';
import { tempBoard } from '../helpers/pipeline-cli.js';
import { personGit as git } from '../helpers/person-git.js';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

function repository(): string {
  const repo = tempBoard('autoteam-in-the-way-');
  dirs.push(repo);
  git(repo, 'init', '-q', '-b', 'main');
  fs.mkdirSync(path.join(repo, 'lib'));
  fs.writeFileSync(path.join(repo, 'lib', 'a.py'), 'A = 1\n');
  git(repo, 'add', '.');
  git(repo, 'commit', '-q', '-m', 'base');
  return repo;
}

describe('untrackedInTheWay', () => {
  it('names untracked and ignored files, and a file where the change needs a folder; not a tracked folder the change turns into a file', async () => {
    const repo = repository();
    const base = git(repo, 'rev-parse', 'HEAD');
    git(repo, 'checkout', '-q', '-b', 'change');
    fs.writeFileSync(path.join(repo, 'new.py'), 'print(1)\n');
    fs.writeFileSync(path.join(repo, 'kept.log'), 'the change adds a log\n');
    fs.mkdirSync(path.join(repo, 'docs'));
    fs.writeFileSync(path.join(repo, 'docs', 'guide.md'), '# Guide\n');
    // lib/ becomes a file.
    git(repo, 'rm', '-q', '-r', 'lib');
    fs.writeFileSync(path.join(repo, 'lib'), 'now a file\n');
    git(repo, 'add', '-f', '.');
    git(repo, 'commit', '-q', '-m', 'change');
    const change = git(repo, 'rev-parse', 'HEAD');
    git(repo, 'checkout', '-q', 'main');
    expect(await untrackedInTheWay(repo, base, change)).toEqual([]);

    fs.writeFileSync(path.join(repo, 'new.py'), 'mine\n');
    fs.appendFileSync(path.join(repo, '.git', 'info', 'exclude'), '*.log\n');
    fs.writeFileSync(path.join(repo, 'kept.log'), 'mine, ignored here\n');
    fs.writeFileSync(path.join(repo, 'docs'), 'a file of mine where the change puts a folder\n');
    expect((await untrackedInTheWay(repo, base, change)).sort()).toEqual(['docs', 'kept.log', 'new.py']);
  });
});

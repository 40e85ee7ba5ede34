import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/** Runs git in `cwd` as the person (a fixed identity, whatever the machine's git configuration), and returns its output trimmed. */
export function personGit(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, GIT_AUTHOR_NAME: 'Person', GIT_AUTHOR_EMAIL: 'person@example.com', GIT_COMMITTER_NAME: 'Person', GIT_COMMITTER_EMAIL: 'person@example.com' },
  }).trim();
}

/** Makes `repo` a repository on branch main with one commit, by the person, holding README.md. */
export function firstCommit(repo: string): void {
  personGit(repo, 'init', '-q', '-b', 'main');
  fs.writeFileSync(path.join(repo, 'README.md'), '# A project\n');
  personGit(repo, 'add', 'README.md');
  personGit(repo, 'commit', '-q', '-m', 'Initial commit');
}

/**
 * A bare repository (`<folder>/project.git`) whose `main` holds `files` in one commit, pushed from
 * the person's clone (its `origin`), which stays to move `main` with; `base` is that first commit.
 */
export function bareRepository(folder: (prefix: string) => string, files: Record<string, string> = { 'README.md': '# project\n' }): { bare: string; person: string; base: string } {
  const bare = path.join(folder('autoteam-bare-'), 'project.git');
  personGit(path.dirname(bare), 'init', '-q', '--bare', '-b', 'main', bare);
  const person = folder('autoteam-person-');
  personGit(person, 'init', '-q', '-b', 'main');
  personGit(person, 'remote', 'add', 'origin', bare);
  for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(person, name), text);
  personGit(person, 'add', '.');
  personGit(person, 'commit', '-q', '-m', 'first');
  personGit(person, 'push', '-q', 'origin', 'HEAD:main');
  return { bare, person, base: personGit(bare, 'rev-parse', 'main') };
}

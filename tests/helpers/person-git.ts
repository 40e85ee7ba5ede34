import { execFileSync } from 'node:child_process';

/** Runs git in `cwd` as the person (a fixed identity, whatever the machine's git configuration), and returns its output trimmed. */
export function personGit(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, GIT_AUTHOR_NAME: 'Person', GIT_AUTHOR_EMAIL: 'person@example.com', GIT_COMMITTER_NAME: 'Person', GIT_COMMITTER_EMAIL: 'person@example.com' },
  }).trim();
}

import fs from 'node:fs';
import path from 'node:path';
import { git } from './git.js';

/**
 * The person's files a merge into the checkout at `dir` would write over: paths that `to` adds since
 * `base` where the checkout holds something git does not track — an untracked file, a folder, a link,
 * or a file where the path needs a folder. git refuses a merge over an untracked file, but writes
 * over an ignored one without a word (a `.gitignore` not committed yet, `.git/info/exclude`, a global
 * excludes file). The checkout is clean when this is asked (`git diff HEAD` is empty), so what is
 * tracked there is git's to replace and is not listed.
 */
export async function untrackedInTheWay(dir: string, base: string, to: string): Promise<string[]> {
  const added = (await git(dir, ['diff', '--name-only', '--no-renames', '--diff-filter=A', '-z', base, to])).stdout.split('\0').filter(Boolean);
  const found = new Set<string>();
  for (const file of added) {
    const parts = file.split('/');
    for (let i = 1; i <= parts.length; i++) {
      const at = parts.slice(0, i).join('/');
      const stat = fs.lstatSync(path.join(dir, at), { throwIfNoEntry: false });
      if (!stat) break;
      if (i === parts.length || !stat.isDirectory()) {
        found.add(at);
        break;
      }
    }
  }
  if (found.size === 0) return [];
  // A path the checkout tracks, or a folder it tracks files in (a change may turn a folder into a file): git's to replace.
  const tracked = (await git(dir, ['--literal-pathspecs', 'ls-files', '-z', '--', ...found])).stdout.split('\0').filter(Boolean);
  return [...found].filter((file) => !tracked.some((path) => path === file || path.startsWith(`${file}/`)));
}

/** `a.py, b.py` (at most five named), for a line that says what is in the way. */
export function namedFiles(files: readonly string[]): string {
  return `${files.slice(0, 5).join(', ')}${files.length > 5 ? `, and ${files.length - 5} more` : ''}`;
}

/** Folders of the runtime's own in a worktree (the sandbox's home, temp and run folders), never the work. */
const RUNTIME_ROOTS = new Set(['.home', '.tmp', '.run']);

/**
 * Files of the worktree that git leaves out of the change because a rule of this machine ignores them
 * — `.git/info/exclude` or a global excludes file, not a `.gitignore` the repository holds — each with
 * the rule's file: the approval commits what git adds, so such a file, tested in review, is not merged.
 */
export async function ignoredByThisMachine(worktree: string): Promise<Array<{ file: string; rule: string }>> {
  const listed = (await git(worktree, ['ls-files', '--others', '--ignored', '--exclude-standard', '--directory', '-z'])).stdout.split('\0').filter(Boolean);
  const candidates = listed.filter((file) => !RUNTIME_ROOTS.has(file.split('/')[0]!));
  if (candidates.length === 0) return [];
  // -z: each match is its rule's file, line, pattern and the path, NUL after each.
  const fields = (await git(worktree, ['check-ignore', '-v', '-z', '--stdin'], { input: candidates.join('\0'), allowFailure: true })).stdout.split('\0');
  const found: Array<{ file: string; rule: string }> = [];
  for (let i = 0; i + 3 < fields.length; i += 4) {
    const [rule, , , file] = fields.slice(i, i + 4) as [string, string, string, string];
    // The repository's own rules are named relative to the worktree; this machine's by their full path.
    if (!rule || (!path.isAbsolute(rule) && path.basename(rule) === '.gitignore')) continue;
    found.push({ file, rule });
  }
  return found;
}

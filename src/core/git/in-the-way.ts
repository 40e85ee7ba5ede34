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

/**
 * The person's uncommitted changes at the checkout in `dir` that a merge of `to` would meet: changes,
 * staged or not, to files the branch changes since `base` (where it left `HEAD`'s history), and, for a
 * merge that is no fast-forward, anything staged, since git merges into the index. git refuses such a
 * merge in words of its own that say nothing of what to do. A file deleted on both sides, and a
 * submodule's own uncommitted work, are not in the way (git merges over them).
 */
export async function changesInTheWay(dir: string, base: string, to: string, options: { fastForward: boolean }): Promise<string[]> {
  // Each changed path with its status letter (`--name-status -z`: letter, path, letter, path, …).
  const changes = async (...args: string[]) => {
    const fields = (await git(dir, ['diff', '--name-status', '--no-renames', '--ignore-submodules=dirty', '-z', ...args, '--'])).stdout.split('\0').filter(Boolean);
    return new Map(Array.from({ length: fields.length / 2 }, (_, i) => [fields[2 * i + 1]!, fields[2 * i]!] as const));
  };
  const yours = await changes('HEAD');
  if (yours.size === 0) return [];
  const staged = options.fastForward ? new Map<string, string>() : await changes('--cached', 'HEAD');
  const merged = await changes(base, to);
  const bothDeleted = (file: string) => yours.get(file) === 'D' && merged.get(file) === 'D';
  return [...yours.keys()].filter((file) => staged.has(file) || (merged.has(file) && !bothDeleted(file)));
}

import path from 'node:path';
import { git, gitEnv } from './git.js';

/** The files a folder's instructions for agents are in, by preference: AGENTS.md, else CLAUDE.md. */
export const INSTRUCTION_FILES = ['AGENTS.md', 'CLAUDE.md'] as const;

/** A folder's instruction file as committed: its path in the repository and its content. */
export interface InstructionFile {
  path: string;
  content: Buffer;
}

interface Entry {
  mode: string;
  sha: string;
}

/** `git ls-tree -z` of these paths at `commit`: path → entry, for the paths that exist. */
async function entries(repo: string, commit: string, paths: readonly string[]): Promise<Map<string, Entry>> {
  const found = new Map<string, Entry>();
  if (paths.length === 0) return found;
  const { stdout } = await git(repo, ['ls-tree', '-z', commit, '--', ...paths]);
  for (const record of stdout.split('\0')) {
    const tab = record.indexOf('\t');
    if (tab < 0) continue;
    const [mode, type, sha] = record.slice(0, tab).split(' ');
    if (type === 'blob' && mode && sha) found.set(record.slice(tab + 1), { mode, sha });
  }
  return found;
}

async function blob(repo: string, sha: string): Promise<Buffer> {
  const { execa } = await import('execa');
  // Bytes, not text: the cap counts bytes, and a cut must not split a character by accident.
  const result = await execa('git', ['cat-file', 'blob', sha], { cwd: repo, encoding: 'buffer', stripFinalNewline: false, reject: false, env: gitEnv(), extendEnv: false });
  return result.exitCode === 0 ? Buffer.from(result.stdout as Uint8Array) : Buffer.alloc(0);
}

/**
 * The instruction file of each folder in `dirs` (`''` is the repository's top) as committed at
 * `commit` — AGENTS.md, or CLAUDE.md where there is no AGENTS.md — in the order of `dirs`. Read from
 * the commit, not a working tree: what the team writes during a pipeline is not the repository's
 * word. A file that is a link (CLAUDE.md → AGENTS.md, a common arrangement) is followed once, inside
 * the repository.
 */
export async function instructionFiles(repo: string, commit: string, dirs: readonly string[]): Promise<InstructionFile[]> {
  const candidates = dirs.flatMap((dir) => INSTRUCTION_FILES.map((name) => path.posix.join(dir, name)));
  const found = await entries(repo, commit, candidates);
  const chosen = dirs.flatMap((dir) => {
    const name = INSTRUCTION_FILES.map((file) => path.posix.join(dir, file)).find((file) => found.has(file));
    return name ? [name] : [];
  });
  // Links: their text is the target, relative to the link's folder.
  const targets = new Map<string, string>();
  for (const file of chosen) {
    const entry = found.get(file)!;
    if (entry.mode !== '120000') continue;
    const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), (await blob(repo, entry.sha)).toString('utf8').trim()));
    if (!target.startsWith('..') && !path.posix.isAbsolute(target)) targets.set(file, target);
  }
  const linked = await entries(repo, commit, [...new Set(targets.values())].filter((target) => !found.has(target)));
  const files: InstructionFile[] = [];
  for (const file of chosen) {
    const entry = found.get(file)!;
    const target = targets.get(file);
    const real = entry.mode === '120000' ? (target ? (found.get(target) ?? linked.get(target)) : undefined) : entry;
    if (!real || real.mode === '120000') continue;
    files.push({ path: file, content: await blob(repo, real.sha) });
  }
  return files;
}

/**
 * The top folder's instruction files the person has not committed, as a line for them, or null:
 * the team reads those files as committed at each pipeline's base, so one just written (untracked)
 * or changed since is not what the teammates follow, and nothing else would say so.
 */
export async function uncommittedInstructions(top: string): Promise<string | null> {
  // One record per path (no rename pairs); untracked or only staged as new: not in any commit yet.
  const { stdout } = await git(top, ['status', '--porcelain', '-z', '--no-renames', '--untracked-files=normal', '--', ...INSTRUCTION_FILES]);
  const loose = stdout
    .split('\0')
    .filter((record) => record.length > 3)
    .map((record) => `${record.slice(3)} ${record.startsWith('??') || record.startsWith('A') ? 'is not committed' : 'has uncommitted changes'}`);
  if (loose.length === 0) return null;
  return `${loose.join('; ')}: the teammates read the repository's instructions as committed at the pipeline's base, so they do not follow ${loose.length === 1 ? 'it' : 'them'} until committed`;
}

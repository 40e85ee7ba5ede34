import fs from 'node:fs';
import path from 'node:path';
import { Option } from 'commander';
import { UsageError } from './board-options.js';

/** `--file <path>` of `run` and `post`: requirements one a line. */
export const requirementsFileOption = () => new Option('--file <path>', 'requirements one a line (blank lines and lines starting with # are skipped), after any given as arguments');

/**
 * The requirements a command was given: each argument is one (quote it), then the lines of `--file`.
 * A file that cannot be read or holds none is an error naming it; so is no requirement at all.
 */
export function requirementsFrom(args: readonly string[], file: unknown): string[] {
  // Which one is empty, when several are given: `run "a" ""` (a variable that was not set).
  const empty = args.findIndex((arg) => !arg.trim());
  if (empty >= 0) throw new UsageError(`a requirement cannot be empty${args.length === 1 ? '' : `: requirement ${empty + 1} of the ${args.length} given is blank`}`);
  const requirements = [...args];
  if (file !== undefined) {
    const where = path.resolve(String(file));
    let text: string;
    try {
      text = fs.readFileSync(where, 'utf8');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      throw new UsageError(`--file ${where}: ${code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'a folder, not a file' : `cannot be read (${code ?? String(error)})`}`);
    }
    const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/).map((line) => line.trim()).filter((line) => line && !line.startsWith('#'));
    if (lines.length === 0) throw new UsageError(`--file ${where}: no requirement in it (one a line; blank lines and # comments are skipped)`);
    requirements.push(...lines);
  }
  if (requirements.length === 0) throw new UsageError("missing required argument 'requirement' (or --file <path>, one a line)");
  return requirements;
}

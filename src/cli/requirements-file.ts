import fs from 'node:fs';
import path from 'node:path';
import { isatty } from 'node:tty';
import { type Command, Option } from 'commander';
import { formatLimit } from '../core/sizes.js';
import { checkRequirement, isBlank, trimInvisible } from '../core/stages/requirement.js';
import { UsageError } from './board-options.js';

/** The most a `--file` is read: past it, it is no list of requirements (a log, `/dev/zero`, a pipe that never ends). */
export const MAX_REQUIREMENTS_FILE_BYTES = 4 * 1024 * 1024;
/** The most requirements one command posts: each is a pipeline (and in a repository a worktree and a branch). */
export const MAX_REQUIREMENTS = 1_000;

/** `--file <path>` of `run` and `post`: requirements one a line; given again, each file in turn. */
export const requirementsFileOption = () =>
  new Option('--file <path>', 'requirements one a line (blank lines and lines starting with # are skipped), after any given as arguments; repeat it for more files; - reads standard input').argParser(
    (value: string, previous: string[] | undefined) => [...(previous ?? []), value],
  );

/**
 * The requirements a command was given: each argument is one (quote it), then the lines of each
 * `--file` in turn (`-`: standard input). A file that cannot be read, is not text, or holds none is an
 * error naming it, and a line over the size of a requirement names its file and line; so is no
 * requirement at all. One given twice is worked twice, and `note` says so, naming both places.
 */
export function requirementsFrom(args: readonly string[], files: unknown, command?: Command, note: (line: string) => void = (line) => console.error(line)): string[] {
  // Which one is empty, when several are given: `run "a" ""` (a variable that was not set).
  const empty = args.findIndex((arg) => isBlank(arg));
  if (empty >= 0) throw new UsageError(`a requirement cannot be empty${args.length === 1 ? '' : `: requirement ${empty + 1} of the ${args.length} given is blank`}`);
  const given: Array<{ text: string; from: string }> = args.map((text, index) => {
    try {
      // An argument's bytes that are not UTF-8 (a terminal in another encoding) reach it as U+FFFD.
      if (text.includes('\uFFFD')) throw new Error('a requirement must be UTF-8 text: this one holds bytes that are not (shown as �; is the terminal set to UTF-8?)');
      return { text: checkRequirement(text), from: `requirement ${index + 1}` };
    } catch (error) {
      throw new UsageError(args.length === 1 ? (error as Error).message : `requirement ${index + 1} of the ${args.length} given: ${(error as Error).message}`);
    }
  });
  const list = (files === undefined ? [] : Array.isArray(files) ? files : [files]).map(String);
  if (list.filter((file) => file === '-').length > 1) throw new UsageError('--file - is given more than once: standard input is read once');
  const twice = list.find((file, i) => file !== '-' && list.findIndex((other) => other !== '-' && path.resolve(other) === path.resolve(file)) < i);
  if (twice !== undefined) throw new UsageError(`--file ${twice} is given more than once: each of its requirements would be posted twice`);
  for (const file of list) {
    const where = file === '-' ? '-' : path.resolve(file);
    for (const line of linesOf(where, file, command?.name() ?? 'run')) given.push(line);
    if (given.length > MAX_REQUIREMENTS) throw new UsageError(`--file ${where}: ${given.length.toLocaleString('en-US')} requirements given with it; one command posts at most ${MAX_REQUIREMENTS.toLocaleString('en-US')} (each is a pipeline): ${where === '-' ? 'split the input' : 'split the file'}`);
  }
  if (given.length === 0) throw new UsageError(`missing required argument 'requirement' (or --file <path>, one a line)${command ? tookTheRequirement(command) : ''}`);
  const first = new Map<string, string>();
  for (const { text, from } of given) {
    // The same words in any case and spacing, with or without a closing full stop (or ! or ?).
    const key = text.trim().replace(/\s+/g, ' ').replace(/\s*[.!?]+$/, '').toLowerCase();
    const earlier = first.get(key);
    if (earlier === undefined) first.set(key, from);
    else note(`note: ${from} repeats ${earlier}: it becomes a pipeline of its own, worked again`);
  }
  return given.map(({ text }) => text);
}

/**
 * With no requirement: a flag given a value of several words (`run --model "Write a …"`), which took
 * the requirement as its value because its own was left out.
 */
function tookTheRequirement(command: Command): string {
  const option = command.options.find((candidate) => {
    const value: unknown = command.getOptionValue(candidate.attributeName());
    return command.getOptionValueSource(candidate.attributeName()) === 'cli' && typeof value === 'string' && /\s/.test(value.trim());
  });
  if (!option) return '';
  return ` — ${tookAsValue(option.long!, String(command.getOptionValue(option.attributeName())))}`;
}

/** A flag that took the requirement as its value, as autoteam names one: `--model took 'Write a …' as its value: was its own left out?` */
export function tookAsValue(flag: string, value: string): string {
  return `${flag} took '${value.length > 60 ? `${value.slice(0, 60)}…` : value}' as its value: was its own left out?`;
}

/** The requirements of one file (`-`: standard input), each with where it is, as given: `reqs.txt line 5`, `a/reqs.txt line 2`. */
function linesOf(where: string, given: string, commandName: string): Array<{ text: string; from: string }> {
  const name = where === '-' ? 'standard input' : given;
  // A terminal is not read to its end (Ctrl+D) here: the requirements are piped in or in a file.
  // Asked of the descriptor: process.stdin would make a pipe non-blocking, and a slow writer an EAGAIN.
  if (where === '-' && isatty(0)) throw new UsageError(`--file -: standard input is a terminal: pipe the requirements in (cat reqs.txt | autoteam ${commandName} --file -), or give them as arguments or in a file`);
  let bytes: Buffer;
  try {
    bytes = readCapped(where);
  } catch (error) {
    if (error instanceof UsageError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(`--file ${where}: ${code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'a folder, not a file' : `cannot be read (${code ?? String(error)})`}`);
  }
  // Text is UTF-8 without NUL bytes: anything else (an image, an archive) would post its bytes as requirements.
  let text = '';
  try {
    if (!bytes.includes(0)) text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    // Not UTF-8: left empty, refused below.
  }
  if (!text && bytes.length > 0) throw new UsageError(`--file ${where}: not a text file (requirements are lines of UTF-8 text${badLine(bytes)})`);
  const lines: Array<{ text: string; from: string }> = [];
  text
    .replace(/^\uFEFF/, '')
    .split(/\r?\n/)
    .forEach((raw, index) => {
      const line = raw.trim();
      if (isBlank(line) || trimInvisible(line).startsWith('#')) return;
      try {
        lines.push({ text: checkRequirement(line), from: `${name} line ${index + 1}` });
      } catch (error) {
        throw new UsageError(`--file ${where}, line ${index + 1}: ${(error as Error).message}`);
      }
    });
  if (lines.length === 0) throw new UsageError(`--file ${where}: no requirement in it (one a line; blank lines and # comments are skipped)`);
  return lines;
}

const pause = new Int32Array(new SharedArrayBuffer(4));

/**
 * A file's bytes (`-`: standard input's, to its end), refused past MAX_REQUIREMENTS_FILE_BYTES. A pipe
 * another part of the process made non-blocking answers EAGAIN while its writer is slow: read again
 * a moment later, not failed.
 */
function readCapped(where: string): Buffer {
  const fd = where === '-' ? 0 : fs.openSync(where, 'r');
  try {
    const chunks: Buffer[] = [];
    const buffer = Buffer.allocUnsafe(64 * 1024);
    for (let total = 0; ; ) {
      let got: number;
      try {
        got = fs.readSync(fd, buffer, 0, buffer.length, null);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error;
        Atomics.wait(pause, 0, 0, 10);
        continue;
      }
      if (got === 0) return Buffer.concat(chunks);
      total += got;
      if (total > MAX_REQUIREMENTS_FILE_BYTES) throw new UsageError(`--file ${where}: over ${formatLimit(MAX_REQUIREMENTS_FILE_BYTES)}, which is no list of requirements (one a line, at most ${MAX_REQUIREMENTS.toLocaleString('en-US')})`);
      chunks.push(Buffer.from(buffer.subarray(0, got)));
    }
  } finally {
    if (fd !== 0) fs.closeSync(fd);
  }
}

/** Where a file that is not UTF-8 text first goes wrong: `; line 3 is not`, or nothing for a file with NUL bytes. */
function badLine(bytes: Buffer): string {
  if (bytes.includes(0)) return '';
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let start = 0;
  for (let line = 1; start <= bytes.length; line++) {
    const end = bytes.indexOf(10, start);
    try {
      decoder.decode(bytes.subarray(start, end < 0 ? bytes.length : end));
    } catch {
      return `; line ${line} is not`;
    }
    if (end < 0) break;
    start = end + 1;
  }
  return '';
}

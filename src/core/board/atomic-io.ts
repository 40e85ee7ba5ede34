import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { threadId } from 'node:worker_threads';
import type { z } from 'zod';
import { BoardFileError, describeJsonError } from '../errors.js';
import { describeZodError } from './schemas.js';

/**
 * Every board write is temp file + rename in the same directory, so a reader sees the old file or the
 * new one, never half. fsync is off: atomicity against a crashed process does not need it, and it
 * costs milliseconds per claim; a power loss may lose the last writes but never leaves a torn file.
 *
 * Written by hand rather than with write-file-atomic: that library registers and removes process
 * signal handlers on every call, ~0.2 ms of CPU per write, which was the largest cost of a claim.
 * A temp file left by a crashed writer ends in `.tmp`; TaskBoard removes old ones.
 */
export function writeJsonAtomic(file: string, value: unknown, transform: (text: string) => string = (text) => text): fs.Stats {
  return writeFileAtomic(file, transform(`${JSON.stringify(value, null, 2)}\n`));
}

/** The name of a temp file of writeFileAtomic: `<name>.<pid>.<thread>.<8 hex>.tmp`. */
export const TEMP_FILE = /\.\d+\.\d+\.[0-9a-f]{8}\.tmp$/;

/** Temp file + rename: readers see the old content or the new, never half. Returns the stat of what it wrote. */
export function writeFileAtomic(file: string, data: string | Buffer): fs.Stats {
  const temp = `${file}.${process.pid}.${threadId}.${randomUUID().slice(0, 8)}.tmp`;
  let fd: number | null = null;
  try {
    fd = fs.openSync(temp, 'wx', 0o644);
    fs.writeFileSync(fd, data);
    const stat = fs.fstatSync(fd);
    fs.closeSync(fd);
    fd = null;
    fs.renameSync(temp, file);
    return stat;
  } catch (error) {
    if (fd !== null) fs.closeSync(fd);
    fs.rmSync(temp, { force: true });
    throw error;
  }
}

/** Reads and validates a JSON file; the error names the file and the field. */
export function readJsonFile<S extends z.ZodTypeAny>(file: string, schema: S): z.output<S> {
  return parseJsonText(file, readText(file), schema);
}

/** A file's text; a folder where the file should be is a BoardFileError naming it. */
export function readText(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EISDIR') throw new BoardFileError(file, 'is a folder, not a file');
    throw error;
  }
}

export function parseJsonText<S extends z.ZodTypeAny>(file: string, text: string, schema: S): z.output<S> {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new BoardFileError(file, describeJsonError(error, text));
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new BoardFileError(file, describeZodError(parsed.error));
  return parsed.data;
}

/** Codes of a folder that refuses writes: full, read-only, or its permissions changed. */
export const REFUSED_WRITE_CODES: ReadonlySet<string> = new Set(['ENOSPC', 'EDQUOT', 'EROFS', 'EACCES', 'EPERM']);

/**
 * True when `error` is the board's own storage under `rootDir` (.tasks/, .team/, the blobs in
 * .autoteam/; not the worktrees beside them, which are the agents') refusing a write, or holding a
 * file broken by hand (a team config cut short, a folder where an inbox should be): no mistake of the
 * model's, and nothing a retry within the attempt mends.
 */
export function boardWriteRefused(error: unknown, rootDir: string): boolean {
  const { code, path: file } = (error ?? {}) as NodeJS.ErrnoException;
  if (!code || !(REFUSED_WRITE_CODES.has(code) || error instanceof BoardFileError) || typeof file !== 'string') return false;
  const [top, next] = path.relative(path.resolve(rootDir), path.resolve(file)).split(path.sep);
  return top === '.tasks' || top === '.team' || (top === '.autoteam' && next === 'blobs');
}

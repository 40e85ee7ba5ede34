import fs from 'node:fs';
import writeFileAtomic from 'write-file-atomic';
import type { z } from 'zod';
import { BoardFileError } from '../errors.js';
import { describeZodError } from './schemas.js';

/**
 * Every board write is temp file + rename, so a reader sees the old file or the new one, never half.
 * fsync is off: atomicity against a crashed process does not need it, and it costs milliseconds per
 * claim; a power loss may lose the last writes but never leaves a torn file.
 */
export function writeJsonAtomic(file: string, value: unknown): void {
  // Explicit mode and owner spare write-file-atomic a stat of the old file on every write.
  writeFileAtomic.sync(file, `${JSON.stringify(value, null, 2)}\n`, { fsync: false, mode: 0o644, chown: OWNER });
}

const OWNER = process.getuid && process.getgid ? { uid: process.getuid(), gid: process.getgid() } : undefined;

/** Reads and validates a JSON file; the error names the file and the field. */
export function readJsonFile<S extends z.ZodTypeAny>(file: string, schema: S): z.output<S> {
  const text = fs.readFileSync(file, 'utf8');
  return parseJsonText(file, text, schema);
}

export function parseJsonText<S extends z.ZodTypeAny>(file: string, text: string, schema: S): z.output<S> {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new BoardFileError(file, `not valid JSON (${(error as Error).message})`);
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new BoardFileError(file, describeZodError(parsed.error));
  return parsed.data;
}

import fs from 'node:fs';
import path from 'node:path';
import { BoardFileError } from '../errors.js';
import { parseJsonText } from './atomic-io.js';
import { type Task, TaskSchema } from './schemas.js';

/** A task file larger than this is reported as a problem and never read (nor sent to a model). */
export const MAX_TASK_FILE_BYTES = 5 * 1024 * 1024;

/**
 * Reads one task file. A file written by hand needs only a `subject`: the id comes from the file
 * name, the status defaults to pending, `owner: ""` means nobody (the format the task board's lesson
 * writes), and missing times are the file's. autoteam writes its own full format on the next change.
 */
export function readTaskFile(file: string, maxBytes = MAX_TASK_FILE_BYTES): Task {
  const stat = fs.statSync(file);
  if (stat.size > maxBytes) {
    throw new BoardFileError(file, `${(stat.size / 1024 / 1024).toFixed(1)} MB is over the ${Math.round(maxBytes / 1024 / 1024)} MB limit for a task file; it is not read`);
  }
  const text = fs.readFileSync(file, 'utf8');
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return parseJsonText(file, text, TaskSchema); // the same one-line error as any bad JSON
  }
  if (raw && typeof raw === 'object' && !Array.isArray(raw)) {
    const task = { ...(raw as Record<string, unknown>) };
    const id = Number(/task_(\d+)\.json$/.exec(path.basename(file))?.[1]);
    const at = stat.mtime.toISOString();
    task.id ??= id;
    task.status ??= 'pending';
    if (task.owner === '') task.owner = null;
    if (task.role === '') task.role = null;
    task.createdAt ??= at;
    task.updatedAt ??= at;
    raw = task;
  }
  return parseJsonText(file, JSON.stringify(raw), TaskSchema);
}

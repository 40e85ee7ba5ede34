import fs from 'node:fs';
import path from 'node:path';
import { BoardFileError, describeJsonError } from '../errors.js';
import { describeZodError, type Task, TaskSchema } from './schemas.js';

/** A task file larger than this is reported as a problem and never read (nor sent to a model). */
export const MAX_TASK_FILE_BYTES = 5 * 1024 * 1024;

/** `task` as read from `file`, the file of task `id`: one that holds another id is a BoardFileError (never written under that id). */
export function ownTask(file: string, id: number, task: Task): Task {
  if (task.id !== id) throw new BoardFileError(file, `id: ${task.id} does not match the file name`);
  return task;
}

/** Reads one task file; see readTaskFileWithStat. */
export function readTaskFile(file: string, maxBytes = MAX_TASK_FILE_BYTES, validated?: (stat: fs.Stats) => boolean): Task {
  return readTaskFileWithStat(file, maxBytes, validated).task;
}

/**
 * Reads one task file through one descriptor, so the stat returned is that of the content parsed
 * (what the board's index keys on). A file written by hand needs only a `subject`: the id comes
 * from the file name, the status defaults to pending, `owner: ""` means nobody (the format the task
 * board's lesson writes), and missing times are the file's. autoteam writes its own full format on
 * the next change. Throws BoardFileError naming the file and the field.
 */
export function readTaskFileWithStat(file: string, maxBytes = MAX_TASK_FILE_BYTES, validated?: (stat: fs.Stats) => boolean): { task: Task; stat: fs.Stats } {
  const { text, stat } = readWhole(file, maxBytes);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new BoardFileError(file, describeJsonError(error, text));
  }
  // `validated`: this very version (inode, size, mtime) was validated already — by its writer, which
  // validates every task before writing it, or by an earlier read — so it is taken as parsed. A hand
  // edit is a new version, and is validated.
  if (raw && typeof raw === 'object' && !Array.isArray(raw) && validated?.(stat)) return { task: raw as Task, stat };
  if (raw && typeof raw === 'object' && !Array.isArray(raw)) {
    const task = raw as Record<string, unknown>;
    const at = task.createdAt === undefined || task.updatedAt === undefined ? stat.mtime.toISOString() : '';
    task.id ??= Number(/task_(\d+)\.json$/.exec(path.basename(file))?.[1]);
    task.status ??= 'pending';
    if (task.owner === '') task.owner = null;
    if (task.role === '') task.role = null;
    task.createdAt ??= at;
    task.updatedAt ??= at;
  }
  const parsed = TaskSchema.safeParse(raw);
  if (!parsed.success) throw new BoardFileError(file, describeZodError(parsed.error));
  return { task: parsed.data, stat };
}

function readWhole(file: string, maxBytes: number): { text: string; stat: fs.Stats } {
  const fd = fs.openSync(file, 'r');
  try {
    const stat = fs.fstatSync(fd);
    // A folder where a task file should be reads as EISDIR, which names no file.
    if (stat.isDirectory()) throw new BoardFileError(file, 'is a folder, not a task file');
    if (stat.size > maxBytes) {
      throw new BoardFileError(file, `${(stat.size / 1024 / 1024).toFixed(1)} MB is over the ${Math.round(maxBytes / 1024 / 1024)} MB limit for a task file; it is not read`);
    }
    const buffer = Buffer.allocUnsafe(stat.size);
    let length = 0;
    while (length < buffer.length) {
      const read = fs.readSync(fd, buffer, length, buffer.length - length, length);
      if (read === 0) break;
      length += read;
    }
    return { text: buffer.toString('utf8', 0, length), stat };
  } finally {
    fs.closeSync(fd);
  }
}

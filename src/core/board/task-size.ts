import { cutText, formatBytes, formatLimit } from '../sizes.js';
import type { HistoryEntry, Task } from './schemas.js';
import { MAX_TASK_FILE_BYTES } from './task-file.js';

/**
 * How large a task may grow, and what is done when a write would pass it. A task file is read up to
 * MAX_TASK_FILE_BYTES (5 MB); autoteam must be able to read back everything it writes, or a claimed
 * task would be skipped from then on and stay in_progress for good.
 *
 * - A task as posted (the person's requirement, the lead's create_task) may be MAX_POSTED_TASK_BYTES
 *   (4 MB): the rest is room for what autoteam adds while the task is worked (history, usage,
 *   artifacts).
 * - Every write of the runtime is held to MAX_TASK_WRITE_BYTES, a little under the read limit (room
 *   for the history entry a PostgreSQL claim statement appends by itself, and for redaction): when a
 *   write would pass it, the task is trimmed (fitTask) — its history first, then its longest texts,
 *   each with a note — and a `trimmed` history entry says what went. What cannot be trimmed enough is
 *   refused with the reason, never written.
 */
export const MAX_POSTED_TASK_BYTES = 4 * 1024 * 1024;
export const MAX_TASK_WRITE_BYTES = MAX_TASK_FILE_BYTES - 64 * 1024;

/** History entries kept (besides the first) when the history must be trimmed. */
const KEEP_HISTORY = 50;
const DETAIL_CHARS = 2_000;
/** A text cut to fit keeps at least this many characters. */
const KEEP_CHARS = 1_000;
/** Cut this much more than needed, so the next few writes (a claim, usage) fit without cutting again. */
const SLACK_BYTES = 32 * 1024;

/**
 * Bytes of the task as stored (the file board's 2-space JSON file, after `redact`). A small task is
 * taken at its length in characters: neither UTF-8 (3 bytes a character at most) nor redaction
 * (`[redacted]` for a value of 4 characters or more) makes it 8 times larger, so it is far under any
 * limit either way.
 */
export function taskBytes(task: Task, redact: (text: string) => string = (text) => text): number {
  const text = `${JSON.stringify(task, null, 2)}\n`;
  if (text.length < MAX_TASK_FILE_BYTES / 8) return text.length;
  return Buffer.byteLength(redact(text));
}

export type Fitted = { task: Task } | { refused: string };

/**
 * `task` within `limit` bytes (by `measure`): as it is when it fits; else its history trimmed
 * (details cut, the oldest entries but the first dropped), then its longest texts (subject,
 * description, handoff, result, any text in its artifacts) each cut by what is still needed, with a
 * `trimmed` entry (made by `entry`) naming what went; or refused when that is not enough.
 */
export function fitTask(task: Task, limit: number, measure: (task: Task) => number, entry: (detail: string) => HistoryEntry): Fitted {
  let size = measure(task);
  if (size <= limit) return { task };
  const cut: string[] = [];
  // Containers copied, strings shared: a copy of the task's megabytes would cost more than the cut.
  const next = copyContainers(task);
  const dropped = Math.max(0, next.history.length - KEEP_HISTORY - 1);
  const longDetails = next.history.filter((item) => (item.detail?.length ?? 0) > DETAIL_CHARS).length;
  if (dropped > 0 || longDetails > 0) {
    const kept = dropped > 0 ? [next.history[0]!, ...next.history.slice(-KEEP_HISTORY)] : next.history;
    next.history = kept.map((item) => (item.detail && item.detail.length > DETAIL_CHARS ? { ...item, detail: cutText(item.detail, DETAIL_CHARS, 'not kept') } : item));
    if (dropped > 0) cut.push(`${dropped} older history entries`);
    if (longDetails > 0) cut.push('long history details');
    size = measure(next);
  }
  const note = `not kept: a task is stored up to ${formatLimit(limit)}`;
  for (let round = 0; round < 3 && size > limit; round++) {
    // Cutting n characters saves at least n bytes; the notes and the history entry take a little.
    let excess = size - limit + SLACK_BYTES;
    for (const leaf of textLeaves(next).sort((a, b) => b.get().length - a.get().length)) {
      const value = leaf.get();
      if (excess <= 0 || value.length <= KEEP_CHARS + 200) break;
      const shorter = cutText(value, Math.max(KEEP_CHARS, value.length - excess - 200), note);
      leaf.set(shorter);
      excess -= value.length - shorter.length;
      if (!cut.includes(leaf.path)) cut.push(leaf.path);
    }
    size = measure(next);
  }
  if (size > limit) {
    return { refused: `task #${task.id} would be ${formatBytes(size)}, over the ${formatLimit(limit)} autoteam stores a task up to (files are read up to ${formatLimit(MAX_TASK_FILE_BYTES)}), even with its history and longest texts cut; the write is refused` };
  }
  next.history.push(entry(`cut to stay under ${formatLimit(limit)}: ${cut.join(', ')}`));
  return { task: next };
}

function copyContainers<T>(value: T): T {
  if (Array.isArray(value)) return value.map(copyContainers) as T;
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, copyContainers(inner)])) as T;
  return value;
}

interface Leaf {
  path: string;
  get(): string;
  set(value: string): void;
}

/** The texts of a task that may be cut (never ids, statuses, hashes or paths: those are short). */
function textLeaves(task: Task): Leaf[] {
  const leaves: Leaf[] = [];
  const fields = ['subject', 'description', 'handoff', 'result'] as const;
  for (const field of fields) {
    if (typeof task[field] === 'string') leaves.push({ path: field, get: () => task[field] as string, set: (value) => ((task as Record<string, unknown>)[field] = value) });
  }
  const walk = (value: unknown, at: string) => {
    if (!value || typeof value !== 'object') return;
    const record = value as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      const where = `${at}.${key}`;
      if (typeof record[key] === 'string') leaves.push({ path: where, get: () => record[key] as string, set: (text) => (record[key] = text) });
      else walk(record[key], where);
    }
  };
  walk(task.artifacts, 'artifacts');
  return leaves;
}

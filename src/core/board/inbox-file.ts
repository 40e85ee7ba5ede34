import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/**
 * Inbox files as files: appending a line whole, reading the lesson's line format, and reading an
 * inbox that was moved aside a batch at a time — a drain never holds more than one batch of an inbox
 * in memory, however large the file is. Where the reading stands is part of the
 * aside file's name (`<name>.jsonl.<pid>.<rand>.<offset>-<line>.draining`), so a drainer that dies
 * between batches leaves a file the next drainer resumes from that point.
 */

export interface AsideFile {
  path: string;
  /** Bytes already taken from the start of the file. */
  offset: number;
  /** Lines already taken (line numbers go on from here). */
  line: number;
}

export interface InboxLine {
  /** 1-based, in the inbox file as it was moved aside. */
  number: number;
  text: string;
}

const ASIDE = /^(?<base>.+\.jsonl\.\d+\.[0-9a-f]+)(?:\.(?<offset>\d+)-(?<line>\d+))?\.draining$/;

/** Where an aside file stands, from its name (a name without a position, as older drainers left, is at the start). */
export function parseAside(file: string): AsideFile | null {
  const match = ASIDE.exec(path.basename(file));
  if (!match?.groups) return null;
  return { path: file, offset: Number(match.groups.offset ?? 0), line: Number(match.groups.line ?? 0) };
}

/** The aside file renamed to record a new position; returns it as renamed. */
export function advanceAside(aside: AsideFile, offset: number, line: number): AsideFile {
  const base = ASIDE.exec(path.basename(aside.path))!.groups!.base!;
  const next = path.join(path.dirname(aside.path), `${base}.${offset}-${line}.draining`);
  fs.renameSync(aside.path, next);
  // A live drainer's file must not look orphaned to another drainer.
  const now = new Date();
  fs.utimesSync(next, now, now);
  return { path: next, offset, line };
}

/**
 * The complete lines from `aside.offset`, about `maxBytes` of them (at least one whole line, whatever
 * its length, unless the line is longer than `maxLineBytes`: then it is skipped and reported as such).
 * `end` is the offset after the last line returned, `line` its number; `done` when nothing is left.
 */
export function readLines(
  aside: AsideFile,
  maxBytes: number,
  maxLineBytes: number,
): { lines: InboxLine[]; tooLong: number[]; end: number; line: number; done: boolean } {
  const fd = fs.openSync(aside.path, 'r');
  try {
    const size = fs.fstatSync(fd).size;
    const lines: InboxLine[] = [];
    const tooLong: number[] = [];
    const buffer = Buffer.allocUnsafe(Math.min(Math.max(maxBytes, 64 * 1024), 4 * 1024 * 1024));
    let end = aside.offset;
    let number = aside.line;
    /** The current line's bytes read so far (none kept once it is known to be too long). */
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    let skipping = false;
    const finishLine = (rest: Buffer, next: number) => {
      number++;
      if (skipping) tooLong.push(number);
      else lines.push({ number, text: Buffer.concat([...pending, rest]).toString('utf8') });
      pending = [];
      pendingBytes = 0;
      skipping = false;
      end = next;
    };
    let position = aside.offset;
    while (position < size && end - aside.offset < maxBytes) {
      const got = fs.readSync(fd, buffer, 0, buffer.length, position);
      if (got === 0) break;
      const chunk = buffer.subarray(0, got);
      let start = 0;
      for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, start)) {
        finishLine(chunk.subarray(start, at), position + at + 1);
        start = at + 1;
        if (end - aside.offset >= maxBytes) break;
      }
      if (end - aside.offset >= maxBytes) break;
      // The rest of the chunk starts a line that goes on in the next one.
      if (!skipping && start < got) {
        pending.push(Buffer.from(chunk.subarray(start)));
        pendingBytes += got - start;
        if (pendingBytes > maxLineBytes) {
          skipping = true;
          pending = [];
          pendingBytes = 0;
        }
      }
      position += got;
    }
    // A last line without its newline (a writer that died mid-append, a hand edit) is a line too.
    if (position >= size && end < size && end - aside.offset < maxBytes) finishLine(Buffer.alloc(0), size);
    return { lines, tooLong, end, line: number, done: end >= size };
  } finally {
    fs.closeSync(fd);
  }
}

/** Lines in `file` (0 when it is missing), counted a chunk at a time. */
export function countLines(file: string): number {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch {
    return 0;
  }
  try {
    const chunk = Buffer.allocUnsafe(1024 * 1024);
    let count = 0;
    let position = 0;
    let last = 10;
    for (;;) {
      const got = fs.readSync(fd, chunk, 0, chunk.length, position);
      if (got === 0) break;
      const view = chunk.subarray(0, got);
      for (let at = view.indexOf(10); at !== -1; at = view.indexOf(10, at + 1)) count++;
      last = view[got - 1]!;
      position += got;
    }
    return position > 0 && last !== 10 ? count + 1 : count;
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * An inbox line in the lesson's format (`{type, from, content, timestamp}`, no id or recipient)
 * reads as a full message: the id from the line's hash, the recipient from the inbox, the time from
 * the timestamp (Unix seconds or milliseconds, or a date string such as ISO 8601's).
 */
export function fromLessonLine(raw: unknown, inbox: string, line: string): unknown {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return raw;
  const message = { ...(raw as Record<string, unknown>) };
  message.id ??= `line-${createHash('sha256').update(line).digest('hex').slice(0, 16)}`;
  message.to ??= inbox;
  message.type ??= 'message';
  if (message.at === undefined && typeof message.timestamp === 'number') {
    const ms = message.timestamp > 1e12 ? message.timestamp : message.timestamp * 1000;
    message.at = new Date(ms).toISOString();
  }
  // A timestamp that is no date is left for the message's check to name (`at: missing`).
  if (message.at === undefined && typeof message.timestamp === 'string' && !Number.isNaN(Date.parse(message.timestamp))) message.at = new Date(message.timestamp).toISOString();
  return message;
}

/**
 * Appends `text` or nothing: a failed append (a full disk) is cut back to the old length under the
 * caller's lock, so no torn line is left for the next message to be glued to.
 */
export function appendWhole(file: string, text: string): void {
  const before = fs.statSync(file, { throwIfNoEntry: false })?.size ?? 0;
  try {
    fs.appendFileSync(file, text);
  } catch (error) {
    try {
      fs.truncateSync(file, before);
    } catch {
      // nothing was created
    }
    throw error;
  }
}

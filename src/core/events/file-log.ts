import fs from 'node:fs';
import path from 'node:path';
import { withLock } from '../board/lock.js';
import { redact, secretValues } from '../trace/redact.js';
import { type EventLog, pause } from './log.js';
import { type EventFilter, matches, type TeamEvent, TeamEventSchema } from './schema.js';

export interface FileEventLogOptions {
  /** Past this size the log is rotated (default 8 MB). */
  maxBytes?: number;
  /** Rotated files kept besides the current one (default 3): at most (keep + 1) × maxBytes on disk. */
  keep?: number;
  /** How often a follower looks for new lines without a change notification (default 200 ms). */
  pollMs?: number;
}

/** The last bytes of a file searched for its last complete line. */
const TAIL_BYTES = 64 * 1024;

/**
 * `.team/events.jsonl`: one event a line, appended under the log's lock, which also numbers them
 * (`seq`), so every thread and process of the team writes one ordered log. Past `maxBytes` the file
 * is renamed to `events.1.jsonl` (older ones shift up, the oldest past `keep` is deleted). Every line
 * is redacted before it is written.
 */
export class FileEventLog implements EventLog {
  readonly file: string;
  private readonly maxBytes: number;
  private readonly keep: number;
  private readonly pollMs: number;
  private readonly secrets = secretValues();
  /** The current file as this process last wrote it: while it is unchanged, its last seq is known. */
  private written: { ino: number; size: number; seq: number } | null = null;

  constructor(rootDir: string, options: FileEventLogOptions = {}) {
    this.file = path.join(path.resolve(rootDir), '.team', 'events.jsonl');
    this.maxBytes = options.maxBytes ?? 8 * 1024 * 1024;
    this.keep = options.keep ?? 3;
    this.pollMs = options.pollMs ?? 200;
  }

  async append(events: readonly TeamEvent[]): Promise<TeamEvent[]> {
    if (events.length === 0) return [];
    fs.mkdirSync(path.dirname(this.file), { recursive: true });
    return withLock(this.file, () => {
      const last = this.lastSeq();
      let seq = last.seq;
      // `seq` first: a tail read finds it at the start of the line.
      const numbered = events.map(({ seq: _old, ...event }) => ({ seq: ++seq, ...event }) as TeamEvent);
      // After a line a killed writer left without its newline, this batch starts a line of its own.
      const text = (last.torn ? '\n' : '') + numbered.map((event) => `${redact(JSON.stringify(event), this.secrets)}\n`).join('');
      const size = fs.statSync(this.file, { throwIfNoEntry: false })?.size ?? 0;
      if (size > 0 && size + Buffer.byteLength(text) > this.maxBytes) this.rotate();
      // One write: a reader sees whole lines or none of this batch's last line.
      fs.appendFileSync(this.file, text);
      const stat = fs.statSync(this.file);
      this.written = { ino: stat.ino, size: stat.size, seq };
      return numbered;
    });
  }

  async read(filter: EventFilter = {}, limit = Number.POSITIVE_INFINITY): Promise<TeamEvent[]> {
    const found: TeamEvent[] = [];
    for (const file of this.generations()) {
      // A whole older file before `since` is skipped without parsing it.
      if (typeof filter.since === 'number' && file !== this.file && lastSeqOf(file).seq <= filter.since) continue;
      for (const event of parseLines(readText(file))) if (matches(event, filter)) found.push(event);
    }
    return found.length > limit ? found.slice(found.length - limit) : found;
  }

  async subscribe(filter: EventFilter, onEvent: (event: TeamEvent) => void, signal: AbortSignal): Promise<void> {
    let last = 0;
    const deliver = (event: TeamEvent) => {
      last = Math.max(last, event.seq ?? 0);
      if (matches(event, filter)) onEvent(event);
    };
    // Where the file stood before the first read: what is appended meanwhile is read again, and
    // dropped by its seq, rather than missed.
    let at = this.position();
    for (const event of await this.read(filter)) deliver(event);
    if (typeof filter.since === 'number') last = Math.max(last, filter.since);
    // A change notification makes the follower prompt; the poll is the fallback.
    const wake = watchDir(path.dirname(this.file));
    try {
      while (!signal.aborted) {
        await pause(this.pollMs, signal, wake);
        const now = this.position();
        if (now.ino === at.ino && now.size === at.size) continue;
        if (now.ino === at.ino && now.size > at.size) {
          const { lines, consumed } = readFrom(this.file, at.size);
          for (const event of parseLines(lines)) if ((event.seq ?? 0) > last) deliver(event);
          // `last` only grows: a line read twice is delivered once.
          at = { ino: now.ino, size: at.size + consumed };
        } else {
          // Rotated, replaced or just made: catch up from every generation, then follow the new file
          // from where it stood before that read — a line appended during the read is read again
          // (and dropped by its seq) rather than skipped.
          const next = this.position();
          // Emptied in place, or removed or replaced by hand and numbered back from where it was (a
          // rotation's new file numbers on past every line it follows): what it holds now is new.
          const first = firstSeqOf(this.file);
          if (now.ino === at.ino || (first !== null && first <= last)) {
            const { lines, consumed } = readFrom(this.file, 0);
            last = 0;
            for (const event of parseLines(lines)) deliver(event);
            at = { ino: next.ino, size: consumed };
          } else {
            for (const event of await this.read({ since: last })) deliver(event);
            at = next;
          }
        }
      }
    } finally {
      wake.close();
    }
  }

  /**
   * Lines of the log that are not events (edited by hand, cut short by a full disk), oldest first,
   * each as `<file>:<line>`: `read` skips them, and a person reading the log is told. A last line still
   * being written (no newline yet) is not one.
   */
  unreadable(): string[] {
    const found: string[] = [];
    for (const file of this.generations()) {
      const lines = readText(file).split('\n');
      // After the last newline: nothing, or in the current file a line still being written (a rotated file's is cut short).
      if (file === this.file || lines.at(-1) === '') lines.pop();
      lines.forEach((line, i) => {
        if (line && parseLines(line).length === 0) found.push(`${file}:${i + 1}`);
      });
    }
    return found;
  }

  /**
   * The highest seq written: this process's memory while the file is as it left it, else the tail;
   * `torn`: the current file ends inside a line.
   */
  private lastSeq(): Tail {
    const stat = fs.statSync(this.file, { throwIfNoEntry: false });
    if (stat && this.written && stat.ino === this.written.ino && stat.size === this.written.size) return { seq: this.written.seq, torn: false };
    const tail = stat && stat.size > 0 ? lastSeqOf(this.file) : { seq: 0, torn: false };
    // No line of its own (just rotated, or only a torn one): the last seq is in the newest rotated file.
    return tail.seq > 0 ? tail : { seq: lastSeqOf(this.rotated(1)).seq, torn: tail.torn };
  }

  private rotate(): void {
    fs.rmSync(this.rotated(this.keep), { force: true });
    for (let n = this.keep - 1; n >= 1; n--) {
      if (fs.existsSync(this.rotated(n))) fs.renameSync(this.rotated(n), this.rotated(n + 1));
    }
    fs.renameSync(this.file, this.rotated(1));
  }

  private rotated(n: number): string {
    return this.file.replace(/\.jsonl$/, `.${n}.jsonl`);
  }

  /** Oldest first: the rotated files, then the current one. */
  private generations(): string[] {
    const files: string[] = [];
    for (let n = this.keep; n >= 1; n--) if (fs.existsSync(this.rotated(n))) files.push(this.rotated(n));
    if (fs.existsSync(this.file)) files.push(this.file);
    return files;
  }

  private position(): { ino: number; size: number } {
    const stat = fs.statSync(this.file, { throwIfNoEntry: false });
    return { ino: stat?.ino ?? 0, size: stat?.size ?? 0 };
  }
}

function readText(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

/** Complete lines from `offset` on, and how many bytes they take (a line still being written waits). */
function readFrom(file: string, offset: number): { lines: string; consumed: number } {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch {
    return { lines: '', consumed: 0 };
  }
  try {
    const size = fs.fstatSync(fd).size;
    const buffer = Buffer.alloc(Math.max(0, size - offset));
    fs.readSync(fd, buffer, 0, buffer.length, offset);
    const end = buffer.lastIndexOf(0x0a) + 1;
    return { lines: buffer.subarray(0, end).toString('utf8'), consumed: end };
  } finally {
    fs.closeSync(fd);
  }
}

interface Tail {
  seq: number;
  torn: boolean;
}

/** The seq of a file's first line, from its head alone (null: no file, or no event there). */
function firstSeqOf(file: string): number | null {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch {
    return null;
  }
  try {
    const head = Buffer.alloc(32);
    const read = fs.readSync(fd, head, 0, head.length, 0);
    const seq = /^\{"seq":(\d+),/.exec(head.toString('latin1', 0, read))?.[1];
    return seq ? Number(seq) : null;
  } finally {
    fs.closeSync(fd);
  }
}

/** The seq of a file's last line (0 when there is none), and whether the file ends inside a line. */
function lastSeqOf(file: string): Tail {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch {
    return { seq: 0, torn: false };
  }
  try {
    const size = fs.fstatSync(fd).size;
    const start = Math.max(0, size - TAIL_BYTES);
    const buffer = Buffer.alloc(size - start);
    fs.readSync(fd, buffer, 0, buffer.length, start);
    // From the last complete line back, each line's head alone is decoded: every append of a busy
    // team reads this tail, and decoding and splitting all of it cost more than the rest of an append.
    const torn = buffer.length > 0 && buffer[buffer.length - 1] !== 0x0a;
    let end = buffer.length;
    while (end > 0) {
      const from = buffer.lastIndexOf(0x0a, end - 1) + 1;
      // A line cut by the tail's start is no line: its head is not in the buffer.
      if (from === 0 && start > 0) break;
      const seq = /^\{"seq":(\d+),/.exec(buffer.toString('latin1', from, Math.min(end, from + 32)))?.[1];
      if (seq) return { seq: Number(seq), torn };
      end = from - 1;
    }
    return { seq: 0, torn };
  } finally {
    fs.closeSync(fd);
  }
}

/** Lines that parse as events; anything else (a torn or hand-edited line) is skipped. */
function parseLines(text: string): TeamEvent[] {
  const events: TeamEvent[] = [];
  for (const line of text.split('\n')) {
    if (!line) continue;
    try {
      const parsed = TeamEventSchema.safeParse(JSON.parse(line));
      if (parsed.success) events.push(parsed.data);
    } catch {
      // Not JSON: skipped.
    }
  }
  return events;
}

/** A directory watch that wakes a follower; a watch that cannot be made leaves the poll alone. */
function watchDir(dir: string): { on(listener: () => void): () => void; close(): void } {
  const listeners = new Set<() => void>();
  let watcher: fs.FSWatcher | null = null;
  try {
    // A log nobody wrote yet has no folder: made, so the follower is woken from the first event on
    // (a folder it cannot make leaves it to the poll).
    fs.mkdirSync(dir, { recursive: true });
    watcher = fs.watch(dir, { persistent: false }, (_kind, name) => {
      if (name === null || String(name).startsWith('events')) for (const listener of [...listeners]) listener();
    });
    watcher.on('error', () => undefined);
  } catch {
    watcher = null;
  }
  return {
    on(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    close() {
      watcher?.close();
    },
  };
}

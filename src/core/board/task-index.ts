import fs from 'node:fs';
import path from 'node:path';
import { BoardFileError } from '../errors.js';
import { readTaskFile } from './task-file.js';
import type { Task } from './schemas.js';

export interface BoardProblem {
  path: string;
  message: string;
}

export const TASK_FILE = /^task_(\d+)\.json$/;

/** A file's identity for the index: every atomic write renames a new inode in. */
function keyOf(stat: fs.Stats): string {
  return `${stat.ino}:${stat.size}:${stat.mtimeMs}`;
}

/** Ids of written tasks, one per line, appended after each write: what a warm refresh re-reads. */
export const JOURNAL = '.journal';
/** Past this size a writer starts a new journal; readers notice (new inode) and sweep once. */
const JOURNAL_ROTATE_BYTES = 1 << 20;
/** Hand edits are not journaled: a full sweep at least this often sees them. */
export const DEFAULT_SWEEP_MS = 2_000;

/** Appends `id` to the board's journal (after its file was renamed in), rotating a large journal. */
export function journalWrite(dir: string, id: number): void {
  const file = path.join(dir, JOURNAL);
  try {
    fs.appendFileSync(file, `${id}\n`);
    if (fs.statSync(file).size > JOURNAL_ROTATE_BYTES) fs.renameSync(file, `${file}.old`);
  } catch {
    // A journal that cannot be written costs readers a full sweep, never a lost change.
    fs.rmSync(file, { force: true });
  }
}

/**
 * The board's read side: `id → (inode, size, mtime) → parsed task`. A warm refresh costs what
 * changed: one stat of the journal, then a stat and a read of each task written since. A full sweep
 * (one readdir, one stat per file) runs on the first read, when the journal was rotated or lost, and
 * every `sweepMs` for hand edits, which are not journaled.
 */
export class TaskIndex {
  private readonly entries = new Map<number, { key: string; task: Task | null }>();
  private sorted: Task[] | null = null;
  private readonly problemList = new Map<string, BoardProblem>();
  /** Which journal file was read (inode and birth time: a deleted journal's inode may be reused at once), and how far. */
  private journal: { id: string; offset: number } | null = null;
  private lastSweep = 0;

  constructor(
    private readonly dir: string,
    private readonly onProblem?: (problem: BoardProblem) => void,
    private readonly sweepMs = DEFAULT_SWEEP_MS,
  ) {}

  /** Every valid task, by id; the same (read-only) array while nothing changed. */
  list(): Task[] {
    this.refresh();
    this.sorted ??= [...this.entries.values()]
      .map((entry) => entry.task)
      .filter((task): task is Task => task !== null)
      .sort((a, b) => a.id - b.id);
    return this.sorted;
  }

  problems(): BoardProblem[] {
    this.refresh();
    return [...this.problemList.values()];
  }

  /** True when task `id`'s file differs from what the last refresh read (or is gone). */
  changedSinceScan(id: number): boolean {
    const stat = fs.statSync(path.join(this.dir, `task_${id}.json`), { throwIfNoEntry: false });
    return !stat || this.entries.get(id)?.key !== keyOf(stat);
  }

  private refresh(): void {
    const stat = fs.statSync(path.join(this.dir, JOURNAL), { throwIfNoEntry: false });
    // No journal yet (a board written by hand, or by another tool): inode 0, nothing to read.
    const journal = stat ? { id: `${stat.ino}:${stat.birthtimeMs}`, size: stat.size } : { id: 'none', size: 0 };
    const now = Date.now();
    const fresh = this.journal !== null && journal.id === this.journal.id && journal.size >= this.journal.offset;
    if (!fresh || now - this.lastSweep >= this.sweepMs) {
      // The journal's position is taken first: a write landing during the sweep is read again next time.
      this.journal = { id: journal.id, offset: journal.size };
      this.sweep();
      this.lastSweep = now;
      return;
    }
    if (journal.size === this.journal!.offset) return;
    this.readJournal(this.journal!);
  }

  /** Re-reads the tasks named in the journal since `from.offset`, and moves the offset on. */
  private readJournal(from: { id: string; offset: number }): void {
    let text = '';
    let fd: number | null = null;
    try {
      fd = fs.openSync(path.join(this.dir, JOURNAL), 'r');
      const size = fs.fstatSync(fd).size;
      const buffer = Buffer.alloc(size - from.offset);
      fs.readSync(fd, buffer, 0, buffer.length, from.offset);
      text = buffer.toString('utf8');
    } catch {
      this.journal = null; // rotated between the stat and the open: the next read sweeps
      return;
    } finally {
      if (fd !== null) fs.closeSync(fd);
    }
    const complete = text.lastIndexOf('\n') + 1; // a line still being written is read next time
    from.offset += Buffer.byteLength(text.slice(0, complete));
    let changed = false;
    for (const id of new Set(text.slice(0, complete).split('\n').filter(Boolean).map(Number))) {
      if (!Number.isInteger(id) || id <= 0) continue;
      changed = this.reload(id) || changed;
    }
    if (changed) this.sorted = null;
  }

  /** Re-reads task `id` when its file changed; true when the index did. */
  private reload(id: number): boolean {
    const file = path.join(this.dir, `task_${id}.json`);
    const stat = fs.statSync(file, { throwIfNoEntry: false });
    if (!stat) {
      if (!this.entries.delete(id)) return false;
      this.problemList.delete(file);
      return true;
    }
    const key = keyOf(stat);
    if (this.entries.get(id)?.key === key) return false;
    this.entries.set(id, { key, task: this.load(file, id) });
    return true;
  }

  private sweep(): void {
    let names: string[];
    try {
      names = fs.readdirSync(this.dir);
    } catch {
      names = [];
    }
    const seen = new Set<number>();
    let changed = false;
    for (const name of names) {
      const match = TASK_FILE.exec(name);
      if (!match) {
        if (name.endsWith('.tmp')) removeIfOrphaned(path.join(this.dir, name));
        continue;
      }
      const id = Number(match[1]);
      const file = path.join(this.dir, name);
      const stat = fs.statSync(file, { throwIfNoEntry: false });
      if (!stat) continue;
      seen.add(id);
      const key = keyOf(stat);
      if (this.entries.get(id)?.key === key) continue;
      changed = true;
      this.entries.set(id, { key, task: this.load(file, id) });
    }
    for (const id of this.entries.keys()) {
      if (!seen.has(id)) {
        this.entries.delete(id);
        this.problemList.delete(path.join(this.dir, `task_${id}.json`));
        changed = true;
      }
    }
    if (changed) this.sorted = null;
  }

  private load(file: string, id: number): Task | null {
    try {
      const task = readTaskFile(file);
      if (task.id !== id) throw new BoardFileError(file, `id: ${task.id} does not match the file name`);
      this.problemList.delete(file);
      return task;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      const problem = { path: file, message: (error as Error).message };
      this.problemList.set(file, problem);
      this.onProblem?.(problem);
      return null;
    }
  }
}

/** A temp file older than a minute was left by a writer that died between write and rename. */
function removeIfOrphaned(file: string): void {
  const stat = fs.statSync(file, { throwIfNoEntry: false });
  if (stat && Date.now() - stat.mtimeMs > 60_000) fs.rmSync(file, { force: true });
}

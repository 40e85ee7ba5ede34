import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { TEMP_FILE } from './atomic-io.js';
import { ownTask, readTaskFileWithStat } from './task-file.js';
import { type Task, TaskSchema } from './schemas.js';

export interface BoardProblem {
  path: string;
  message: string;
}

export const TASK_FILE = /^task_(\d+)\.json$/;

/**
 * The task files among `problems` that do not read (a misnamed file is none): each one's id, and its
 * pipeline as far as its text still says (`"pipeline": 3`; null for none; undefined when cut before it).
 */
export function unreadTasks(problems: readonly BoardProblem[]): Array<{ id: number; pipeline: number | null | undefined }> {
  return problems.flatMap((problem) => {
    const id = Number(TASK_FILE.exec(path.basename(problem.path))?.[1] ?? 0);
    if (id <= 0) return [];
    let text = '';
    try {
      text = fs.readFileSync(problem.path, 'utf8');
    } catch {
      // Gone or unreadable: its pipeline is unknown.
    }
    const said = /"pipeline"\s*:\s*(\d+|null)\b/.exec(text)?.[1];
    return [{ id, pipeline: said === undefined ? undefined : said === 'null' ? null : Number(said) }];
  });
}

/** Whether an unreadable task file (`unreadTasks`) may be the next task of pipeline `pipeline`, whose last task is `last`. */
export function mayFollow(unread: { id: number; pipeline: number | null | undefined }, pipeline: number, last: number): boolean {
  return unread.id > last && (unread.pipeline === undefined || unread.pipeline === pipeline);
}
/** A file named as a task might be that is not one (`task_abc.json`): reported, so that a hand-made task is not ignored unsaid. */
const MISNAMED_TASK_FILE = /^task_.*\.json$/;

/** A file's identity for the index: every atomic write renames a new inode in. */
export function keyOf(stat: fs.Stats): string {
  return `${stat.ino}:${stat.size}:${stat.mtimeMs}`;
}

/**
 * The board's change journal: one line per task write, appended after the file was renamed in —
 * `<id> <shape>/<key> <task as one line of JSON>`: the shape of the tasks its writer validates
 * against, the key of the file that holds the version written, and that version. A warm refresh
 * reads what was appended since and takes each task from its line when the file is still that
 * version (one stat, no open), else from the file. A line of just `<id>` (a task too large to copy)
 * means "read the file".
 *
 * A line's copy is taken without validating it again: the one writer (TaskBoard) validates every
 * task before it writes it, and every thread of a team would otherwise validate every task written.
 * The shape keeps that true across versions: a line from a writer whose TaskSchema differs (another
 * version of autoteam on the same board) does not match, and its task is read from the file.
 */
export const JOURNAL = '.journal';
/** Past this size a writer starts a new journal; readers notice (new inode) and sweep once. */
const JOURNAL_ROTATE_BYTES = 8 << 20;
/** A task larger than this is named in the journal, not copied into it (a pipeline's tasks grow long histories). */
const MAX_JOURNALED_BYTES = 16 << 10;
/** Hand edits are not journaled: a full sweep at least this often sees them. */
export const DEFAULT_SWEEP_MS = 2_000;

let shape: string | undefined;

/** The shape of TaskSchema, a hash of its JSON Schema: worked out once, on the first journal line. */
function taskShape(): string {
  shape ??= createHash('sha256')
    .update(JSON.stringify(z.toJSONSchema(TaskSchema, { unrepresentable: 'any' })))
    .digest('hex')
    .slice(0, 12);
  return shape;
}

/** What a journal line says before a task's copy: the tasks' shape and the key of the file written. */
export function journalKey(stat: fs.Stats): string {
  return `${taskShape()}/${keyOf(stat)}`;
}

/** Appends the journal line for task `id` (after its file was renamed in), rotating a large journal. */
export function journalWrite(dir: string, id: number, written?: { stat: fs.Stats; json: string }): void {
  const file = path.join(dir, JOURNAL);
  const line = written && written.json.length <= MAX_JOURNALED_BYTES ? `${id} ${journalKey(written.stat)} ${written.json}\n` : `${id}\n`;
  try {
    fs.appendFileSync(file, line);
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
  /** `written`: the task is its writer's copy from the journal, validated before it was written. */
  private readonly entries = new Map<number, { key: string; task: Task | null; written?: true }>();
  private sorted: Task[] | null = null;
  private readonly problemList = new Map<string, BoardProblem>();
  /** Files in the folder named like tasks that are not (MISNAMED_TASK_FILE), as the last sweep found them. */
  private misnamed = new Set<string>();
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

  /**
   * True when `stat` is the version of task `id` the index holds from its writer's journal line: the
   * writer validated that version before writing it, so a reader of it need not validate it again. A
   * version read from its file (a hand edit, say) is not vouched for: the file may lack what
   * validation fills in.
   */
  holds(id: number, stat: fs.Stats): boolean {
    // The journal's new lines first: the version asked about was most likely written a moment ago
    // (by this thread, before its next step), and its line is read now instead of at the next list().
    // No sweep: this runs under a task's lock, and the next list() sweeps when one is due.
    const journal = this.journalNow();
    if (this.journal !== null && journal.id === this.journal.id && journal.size > this.journal.offset) this.readJournal(this.journal);
    const entry = this.entries.get(id);
    return entry?.written === true && entry.key === keyOf(stat);
  }

  /** True when task `id`'s file is no longer `version` (versionOf at a scan), or is gone. */
  changedSince(id: number, version: string | undefined): boolean {
    const stat = fs.statSync(path.join(this.dir, `task_${id}.json`), { throwIfNoEntry: false });
    return !stat || version !== keyOf(stat);
  }

  /**
   * Reads the board now as a full sweep does, whenever the last was: a writer killed between renaming
   * a task in and appending its journal line left a version only a sweep finds.
   */
  sweepNow(): void {
    this.lastSweep = 0;
    this.refresh();
  }

  /** The version of task `id` the index holds now (its file's identity), for changedSince. */
  versionOf(id: number): string | undefined {
    return this.entries.get(id)?.key;
  }

  /** The journal as it is now: which file (inode and birth time) and how long. */
  private journalNow(): { id: string; size: number } {
    const stat = fs.statSync(path.join(this.dir, JOURNAL), { throwIfNoEntry: false });
    // No journal yet (a board written by hand, or by another tool): nothing to read.
    return stat ? { id: `${stat.ino}:${stat.birthtimeMs}`, size: stat.size } : { id: 'none', size: 0 };
  }

  private refresh(): void {
    const journal = this.journalNow();
    const now = Date.now();
    const fresh = this.journal !== null && journal.id === this.journal.id && journal.size >= this.journal.offset;
    if (!fresh || now - this.lastSweep >= this.sweepMs) {
      if (fresh) {
        // The journal first, from its lines: the sweep then reads only the files it does not name
        // (hand edits), where it would read every task written since the last refresh.
        if (journal.size > this.journal!.offset) this.readJournal(this.journal!);
      } else {
        // The journal's position is taken first: a write landing during the sweep is read again next time.
        this.journal = { id: journal.id, offset: journal.size };
      }
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
    // The last line for each task is its newest version.
    const latest = new Map<number, string>();
    for (const line of text.slice(0, complete).split('\n')) {
      const space = line.indexOf(' ');
      const id = Number(space < 0 ? line : line.slice(0, space));
      if (Number.isInteger(id) && id > 0) latest.set(id, space < 0 ? '' : line.slice(space + 1));
    }
    let changed = false;
    for (const [id, version] of latest) changed = this.update(id, version) || changed;
    if (changed) this.sorted = null;
  }

  private reportMisnamed(now: Set<string>): void {
    for (const file of this.misnamed) if (!now.has(file)) this.problemList.delete(file);
    for (const file of now) {
      if (this.misnamed.has(file)) continue;
      const problem = { path: file, message: `${file}: a task's file is named task_<id>.json, its id a number` };
      this.problemList.set(file, problem);
      this.onProblem?.(problem);
    }
    this.misnamed = now;
  }

  /**
   * Brings task `id` up to date: from `version` (`<shape>/<key> <json>` from the journal) when its
   * file is still that version and the line has this writer's shape, else from the file. True when
   * the index changed.
   */
  private update(id: number, version: string): boolean {
    const file = path.join(this.dir, `task_${id}.json`);
    const stat = fs.statSync(file, { throwIfNoEntry: false });
    if (!stat) {
      if (!this.entries.delete(id)) return false;
      this.problemList.delete(file);
      return true;
    }
    const key = keyOf(stat);
    if (this.entries.get(id)?.key === key) return false;
    const journaled = `${journalKey(stat)} `;
    const task = version.startsWith(journaled) ? parseJournaled(version.slice(journaled.length)) : null;
    if (task?.id === id) {
      this.entries.set(id, { key, task, written: true });
      this.problemList.delete(file);
    } else {
      this.entries.set(id, this.load(file, id, stat));
    }
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
    const misnamed = new Set<string>();
    let changed = false;
    for (const name of names) {
      const match = TASK_FILE.exec(name);
      if (!match) {
        if (TEMP_FILE.test(name)) removeIfOrphaned(path.join(this.dir, name));
        else if (MISNAMED_TASK_FILE.test(name)) misnamed.add(path.join(this.dir, name));
        continue;
      }
      const id = Number(match[1]);
      const file = path.join(this.dir, name);
      const stat = fs.statSync(file, { throwIfNoEntry: false });
      if (!stat) continue;
      seen.add(id);
      if (this.entries.get(id)?.key === keyOf(stat)) continue;
      changed = true;
      this.entries.set(id, this.load(file, id, stat));
    }
    for (const id of this.entries.keys()) {
      if (!seen.has(id)) {
        this.entries.delete(id);
        this.problemList.delete(path.join(this.dir, `task_${id}.json`));
        changed = true;
      }
    }
    if (changed) this.sorted = null;
    this.reportMisnamed(misnamed);
  }

  /** The entry for `file`, keyed by the stat of the content read (`seen`: the stat that showed it changed). */
  private load(file: string, id: number, seen: fs.Stats): { key: string; task: Task | null } {
    try {
      const { task, stat } = readTaskFileWithStat(file);
      ownTask(file, id, task);
      this.problemList.delete(file);
      return { key: keyOf(stat), task };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { key: keyOf(seen), task: null };
      const problem = { path: file, message: (error as Error).message };
      this.problemList.set(file, problem);
      this.onProblem?.(problem);
      return { key: keyOf(seen), task: null };
    }
  }
}

/**
 * A task as the journal copied it — validated by its writer, so not again (see JOURNAL) — or null
 * when the line is not one (then the file is read).
 */
function parseJournaled(json: string): Task | null {
  try {
    const task: unknown = JSON.parse(json);
    return task !== null && typeof task === 'object' && !Array.isArray(task) ? (task as Task) : null;
  } catch {
    return null;
  }
}

/** A temp file older than a minute was left by a writer that died between write and rename. */
function removeIfOrphaned(file: string): void {
  const stat = fs.statSync(file, { throwIfNoEntry: false });
  if (stat && Date.now() - stat.mtimeMs > 60_000) fs.rmSync(file, { force: true });
}

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

/**
 * The board's read side: `id → (inode, size, mtime) → parsed task`. A refresh is one readdir and one
 * stat per file; only files whose key changed are read and validated again.
 */
export class TaskIndex {
  private readonly entries = new Map<number, { key: string; task: Task | null }>();
  private sorted: Task[] | null = null;
  private readonly problemList = new Map<string, BoardProblem>();

  constructor(
    private readonly dir: string,
    private readonly onProblem?: (problem: BoardProblem) => void,
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

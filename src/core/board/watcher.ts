import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import { JOURNAL } from './task-index.js';

export interface BoardWatcherEvents {
  /** Something under `.tasks/` changed. A hint: re-read the board, do not trust the event's detail. */
  board: [];
  /** Inbox `<name>.jsonl` changed. */
  inbox: [name: string];
  error: [error: Error];
}

export interface BoardWatcherOptions {
  /** Emit `board` this often even without events, so a lost event costs at most this long. */
  reconcileMs?: number;
}

const TASK_FILE = /^task_\d+\.json$/;
const INBOX_FILE = /^([A-Za-z0-9_-]+)\.jsonl$/;

/**
 * One `fs.watch` per folder, per process, over `.tasks/` and `.team/inbox/`. Events are coalesced to
 * at most one `board` and one `inbox` per name per turn of the event loop; lock directories, temp
 * files are ignored. Each event names its file (inotify, FSEvents), so a write costs
 * one event and no read of the folder: a watcher that re-read a folder on every change (chokidar did)
 * cost every process a stat of every task file per write, which grew with the board.
 */
export class BoardWatcher extends EventEmitter<BoardWatcherEvents> {
  private watchers: fs.FSWatcher[] = [];
  private reconcileTimer: NodeJS.Timeout | null = null;
  private readonly pending = new Set<string>();
  private readonly tasksDir: string;
  private readonly inboxDir: string;

  constructor(readonly rootDir: string, private readonly options: BoardWatcherOptions = {}) {
    super();
    this.tasksDir = path.join(path.resolve(rootDir), '.tasks');
    this.inboxDir = path.join(path.resolve(rootDir), '.team', 'inbox');
  }

  /** Starts watching; changes made after this resolves are reported. */
  async start(): Promise<void> {
    if (this.watchers.length > 0) return;
    fs.mkdirSync(this.tasksDir, { recursive: true });
    fs.mkdirSync(this.inboxDir, { recursive: true });
    for (const dir of [this.tasksDir, this.inboxDir]) {
      const watcher = fs.watch(dir, (_event, name) => {
        // A platform that does not name the file: the board is read again (inboxes are polled anyway).
        if (name) this.onChange(path.join(dir, name.toString()));
        else this.schedule('board', () => this.tell('board'));
      });
      watcher.on('error', (error) => this.emit('error', error instanceof Error ? error : new Error(String(error))));
      this.watchers.push(watcher);
    }
    if (this.options.reconcileMs) {
      this.reconcileTimer = setInterval(() => this.tell('board'), this.options.reconcileMs);
      this.reconcileTimer.unref();
    }
  }

  async close(): Promise<void> {
    if (this.reconcileTimer) clearInterval(this.reconcileTimer);
    this.reconcileTimer = null;
    for (const watcher of this.watchers.splice(0)) watcher.close();
  }

  private onChange(file: string): void {
    const dir = path.dirname(file);
    const base = path.basename(file);
    // The journal too: readers learn what changed from its line, appended just after the file is
    // renamed in, so a wake on the rename alone can read the board a moment too early.
    if (dir === this.tasksDir && (TASK_FILE.test(base) || base === JOURNAL)) {
      this.schedule('board', () => this.tell('board'));
      return;
    }
    const inbox = dir === this.inboxDir ? INBOX_FILE.exec(base) : null;
    if (inbox) {
      const name = inbox[1]!;
      this.schedule(`inbox:${name}`, () => this.tell('inbox', name));
    }
  }

  /**
   * Tells each listener in turn. One that throws — it read a board file broken by hand, a team config
   * cut short — is an `error`, said once until the board reads clean again, and the others are still
   * told: thrown from a timer, it ended the process with a stack trace.
   */
  private tell(...event: ['board'] | ['inbox', string]): void {
    let failed = false;
    for (const listener of this.listeners(event[0])) {
      try {
        (listener as (...args: unknown[]) => void)(...event.slice(1));
      } catch (error) {
        failed = true;
        const problem = error instanceof Error ? error : new Error(String(error));
        if (problem.message !== this.lastProblem && this.listenerCount('error') > 0) this.emit('error', problem);
        this.lastProblem = problem.message;
      }
    }
    if (!failed && event[0] === 'board') this.lastProblem = null;
  }

  private lastProblem: string | null = null;

  /** Emits on the next turn of the event loop: a burst of events is one emit. */
  private schedule(key: string, emit: () => void): void {
    if (this.pending.has(key)) return;
    this.pending.add(key);
    setImmediate(() => {
      this.pending.delete(key);
      if (this.watchers.length > 0) emit();
    });
  }
}

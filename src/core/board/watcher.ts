import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import { type FSWatcher, watch } from 'chokidar';

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
/** Longer than chokidar's 50 ms 'change' throttle. */
const TRAILING_MS = 75;

/**
 * One chokidar watcher per process over `.tasks/` and `.team/inbox/`. Events are coalesced to at most
 * one `board` and one `inbox` per name per turn of the event loop; lock directories and temp files
 * are ignored.
 */
export class BoardWatcher extends EventEmitter<BoardWatcherEvents> {
  private watcher: FSWatcher | null = null;
  private reconcileTimer: NodeJS.Timeout | null = null;
  private readonly pending = new Set<string>();
  private readonly trailing = new Map<string, NodeJS.Timeout>();
  private readonly tasksDir: string;
  private readonly inboxDir: string;

  constructor(readonly rootDir: string, private readonly options: BoardWatcherOptions = {}) {
    super();
    this.tasksDir = path.join(path.resolve(rootDir), '.tasks');
    this.inboxDir = path.join(path.resolve(rootDir), '.team', 'inbox');
  }

  /** Starts watching; resolves once chokidar is ready to report changes. */
  async start(): Promise<void> {
    if (this.watcher) return;
    fs.mkdirSync(this.tasksDir, { recursive: true });
    fs.mkdirSync(this.inboxDir, { recursive: true });
    const watcher = watch([this.tasksDir, this.inboxDir], {
      ignoreInitial: true,
      depth: 0,
      ignored: (file: string) => {
        const base = path.basename(file);
        if (file === this.tasksDir || file === this.inboxDir) return false;
        return !(TASK_FILE.test(base) || INBOX_FILE.test(base));
      },
    });
    this.watcher = watcher;
    watcher.on('all', (_event, file) => this.onChange(file));
    watcher.on('error', (error) => this.emit('error', error instanceof Error ? error : new Error(String(error))));
    await new Promise<void>((resolve) => watcher.once('ready', () => resolve()));
    if (this.options.reconcileMs) {
      this.reconcileTimer = setInterval(() => this.emit('board'), this.options.reconcileMs);
      this.reconcileTimer.unref();
    }
  }

  async close(): Promise<void> {
    if (this.reconcileTimer) clearInterval(this.reconcileTimer);
    for (const timer of this.trailing.values()) clearTimeout(timer);
    this.trailing.clear();
    this.reconcileTimer = null;
    const watcher = this.watcher;
    this.watcher = null;
    await watcher?.close();
  }

  private onChange(file: string): void {
    const dir = path.dirname(file);
    const base = path.basename(file);
    if (dir === this.tasksDir && TASK_FILE.test(base)) {
      this.schedule('board', () => this.emit('board'));
      return;
    }
    const inbox = dir === this.inboxDir ? INBOX_FILE.exec(base) : null;
    if (inbox) {
      const name = inbox[1]!;
      this.schedule(`inbox:${name}`, () => this.emit('inbox', name));
    }
  }

  /**
   * Emits on the next turn of the event loop, and once more after chokidar's throttle window:
   * chokidar drops (not delays) a second 'change' of the same file within 50 ms, so without the
   * trailing emit the last of several quick rewrites would never be reported.
   */
  private schedule(key: string, emit: () => void): void {
    if (!this.pending.has(key)) {
      this.pending.add(key);
      setImmediate(() => {
        this.pending.delete(key);
        if (this.watcher) emit();
      });
    }
    if (!this.trailing.has(key)) {
      const timer = setTimeout(() => {
        this.trailing.delete(key);
        if (this.watcher) emit();
      }, TRAILING_MS);
      timer.unref();
      this.trailing.set(key, timer);
    }
  }
}

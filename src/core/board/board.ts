import path from 'node:path';
import { FileBlobStore } from './blobs.js';
import { FileDocStore } from './docs.js';
import { FileEventLog } from '../events/file-log.js';
import { boardSink } from './board-sink.js';
import { LeadLease } from './liveness.js';
import { Mailbox } from './mailbox.js';
import { isPostgresUrl } from './pg/url.js';
import { AutoteamError } from '../errors.js';
import { RequestStore } from './requests.js';
import { TaskBoard } from './task-board.js';
import { TeamRegistry } from './team-registry.js';
import { BoardWatcher } from './watcher.js';
import type { Board, OpenBoardOptions } from './board-types.js';

export type { Board, BoardEvents, OpenBoardOptions } from './board-types.js';

/** The file board in `rootDir` (`.tasks/`, `.team/`). */
export function fileBoard(rootDir: string, options: OpenBoardOptions = {}): Board {
  const root = path.resolve(rootDir);
  const docs = new FileDocStore(root);
  const registry = new TeamRegistry(root, { now: options.now, docs });
  const log = new FileEventLog(root);
  const sink = boardSink(log, registry, options);
  const tasks = new TaskBoard(root, { now: options.now, leaseMs: options.leaseMs });
  tasks.emitTo(sink);
  return {
    location: root,
    address: root,
    rootDir: root,
    tasks,
    mailbox: new Mailbox(root, { now: options.now, registry, before: () => sink.flush(), ...(options.maxInboxBytes ? { maxInboxBytes: options.maxInboxBytes } : {}), ...(options.stamp ? { stamp: options.stamp } : {}) }),
    registry,
    requests: new RequestStore(root, options.now, docs),
    docs,
    blobs: new FileBlobStore(root),
    log,
    sink,
    lease: (lease = {}) => new LeadLease(root, { ...lease, docs, now: options.now }),
    events: (events = {}) => new BoardWatcher(root, events),
    close: () => sink.flush(),
  };
}

/**
 * The board at `location` — a `postgres://` URL, or a directory — with `rootDir` as the local folder
 * (for a directory board, the directory itself).
 */
export async function openBoard(location: string, rootDir?: string, options: OpenBoardOptions = {}): Promise<Board> {
  if (!isPostgresUrl(location)) return fileBoard(location, options);
  // A URL is no folder: without one, the inboxes would land in a folder named after the URL.
  if (rootDir === undefined) throw new AutoteamError('a PostgreSQL board needs a local folder for its workspaces and inboxes: openBoard(url, folder)', 'USAGE');
  // Loaded only when used: the file board never pays for the driver.
  const { openPgBoard } = await import('./pg/pg-board.js');
  return openPgBoard(location, path.resolve(rootDir), options);
}


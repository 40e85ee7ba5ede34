import type { BlobStore } from './blobs.js';
import type { DocStore } from './docs.js';
import type { EventLog } from '../events/log.js';
import type { EventSink } from '../events/emitter.js';
import type { LeadLease } from './liveness.js';
import type { Mailbox } from './mailbox.js';
import type { RequestStore } from './requests.js';
import type { TaskBoardLike } from './task-rules.js';
import type { TeamRegistry } from './team-registry.js';

/**
 * What a board is, whichever backend stores it: the file board (board.ts) and the PostgreSQL board
 * (pg/pg-board.ts) both implement it, and neither imports the other.
 */

/** What a board tells the processes on it: the tasks or documents changed, or an inbox got mail. */
export interface BoardEvents {
  on(event: 'board', listener: () => void): this;
  on(event: 'inbox', listener: (name: string) => void): this;
  on(event: 'error', listener: (error: Error) => void): this;
  off(event: 'board' | 'inbox' | 'error', listener: (...args: any[]) => void): this;
  start(): Promise<void>;
  close(): Promise<void>;
}

/**
 * One board: tasks, inboxes, the team registry, protocol requests, the lead's lease and change
 * events, whatever stores them. The runtime above depends only on this. `rootDir` is the local folder
 * every host keeps for itself: workspaces, the trace, submission blobs.
 */
export interface Board {
  /** A directory, or a postgres:// URL with the password hidden: what is shown. */
  readonly location: string;
  /** What another thread of this process opens the same board with (the URL with its password: never shown). */
  readonly address: string;
  readonly rootDir: string;
  readonly tasks: TaskBoardLike;
  readonly mailbox: Mailbox;
  readonly registry: TeamRegistry;
  readonly requests: RequestStore;
  readonly docs: DocStore;
  /** Submitted files by sha256, for rebuilding a workspace where a stage is claimed. */
  readonly blobs: BlobStore;
  /** The team's one ordered event log (`.team/events.jsonl`, or `autoteam_events`). */
  readonly log: EventLog;
  /** How this thread or process puts its events on the log (the tasks' changes go through it). */
  readonly sink: EventSink;
  lease(options?: { heartbeatMs?: number }): LeadLease;
  /** Change events for this process (a file watcher, or LISTEN/NOTIFY). */
  events(options?: { reconcileMs?: number }): BoardEvents;
  /** PostgreSQL only: what this process's replicas read, for its teammate threads to follow (ReplicaFeed). */
  readonly replica?: ReplicaFeed;
  close(): Promise<void>;
}

/**
 * What one read of a PostgreSQL replica brought: the rows it read (each with its version) and what it
 * found gone. A teammate thread's board opened with `follow` takes these from its process's board
 * instead of listening and reading for itself: one LISTEN and one read per change per process, not
 * one per thread. Versions decide, so a read taken late never puts an older row back.
 */
export interface ReplicaRead {
  tasks?: { rows: readonly unknown[]; gone: readonly number[] };
  /** `gone`: a document deleted; a follower drops it unless it holds a version newer than `upTo`. */
  docs?: { rows: Array<{ key: string; doc: unknown; version: number }>; gone: Array<{ key: string; upTo: number }> };
}

export interface ReplicaFeed {
  /** Every read this process's replicas make from now on; returns the unsubscribe. */
  onRead(listener: (read: ReplicaRead) => void): () => void;
  /** A follower's: takes a read its process's board made. */
  take(read: ReplicaRead): void;
}

export interface OpenBoardOptions {
  /** Told once per streak of failures to write the event log (it never stops the team). */
  onEventError?: (error: unknown) => void;
  /** False for read-only use: a database with no board is an error, not a new board. */
  create?: boolean;
  now?: () => Date;
  leaseMs?: number;
  poolSize?: number;
  /**
   * PostgreSQL: connections the pool opens ahead, in the background, and keeps idle: the statements of
   * a burst of work (a team's first tasks) then do not each wait for a connection to be made.
   */
  warmConnections?: number;
  /** An inbox holding this many bytes refuses more messages (MAX_INBOX_MB; default 16 MB). */
  maxInboxBytes?: number;
  /** Fields added to every message this board's mailbox sends (see MailboxOptions.stamp). */
  stamp?: () => Record<string, unknown>;
  /** PostgreSQL: no LISTEN and no poll; the replicas are kept by reads handed to `replica.take` (a teammate thread's). */
  follow?: boolean;
}

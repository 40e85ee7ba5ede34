import { EventEmitter } from 'node:events';
import type pg from 'pg';
import type { Board, BoardEvents, OpenBoardOptions, ReplicaFeed } from '../board-types.js';
import { boardSink } from '../board-sink.js';
import { LeadLease } from '../liveness.js';
import { RequestStore } from '../requests.js';
import { TeamRegistry } from '../team-registry.js';
import { createPool, describeUrl, withConnectionRetry } from './connection.js';
import { PgListener } from './listener.js';
import { PgDocStore } from './pg-docs.js';
import { PgMailbox } from './pg-mailbox.js';
import { PgEventLog } from './pg-events.js';
import { PgTaskBoard } from './pg-task-board.js';
import { migrateWith } from './schema.js';
import { rowFromNotice, type TasksRead } from './task-sql.js';

/**
 * How often the replicas check versions without a notification: the fallback for a lost one, and how
 * heartbeats (written quietly) reach other processes — a beat seen 5 s late is still 5 s inside the
 * 15 s after which a member counts as gone.
 */
const POLL_MS = 5_000;

class Events extends EventEmitter implements BoardEvents {
  private tick: NodeJS.Timeout | null = null;

  constructor(
    private readonly detach: (events: Events) => void,
    private readonly reconcileMs?: number,
  ) {
    super();
  }

  /** With `reconcileMs`, a `board` that often besides, as the file board's watcher ticks (a lead's panels, its inbox poll). */
  async start(): Promise<void> {
    if (!this.reconcileMs || this.tick) return;
    this.tick = setInterval(() => this.emit('board'), this.reconcileMs);
    this.tick.unref();
  }

  async close(): Promise<void> {
    if (this.tick) clearInterval(this.tick);
    this.detach(this);
    this.removeAllListeners();
  }
}

/**
 * The PostgreSQL board: one pool, one LISTEN connection, and replicas of the tasks and documents kept
 * current by notifications (a task's row when it fits, else its id or a document's key: read then)
 * and a version poll. Events go out after the replica applied the change, so a listener that reads
 * the board sees it. Opened with `follow` (a teammate thread's), it has neither: its replicas take
 * what its process's board read (`replica`), handed over before the wake that the change brings.
 */
export async function openPgBoard(url: string, rootDir: string, options: OpenBoardOptions = {}): Promise<Board> {
  const pool = createPool(url, options.poolSize ?? 10);
  try {
    await migrateWith(url, pool, { create: options.create !== false });
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw error;
  }
  if (options.warmConnections) warmPool(pool, options.warmConnections);
  const tasks = new PgTaskBoard(url, pool, { leaseMs: options.leaseMs, rootDir });
  const docs = new PgDocStore(url, pool);
  await Promise.all([tasks.refresh(), docs.refresh()]);
  // The team is named after the database, whichever host creates it first.
  const registry = new TeamRegistry(rootDir, { now: options.now, docs, team: new URL(url).pathname.replace(/^\//, '') || 'team' });
  // Events before messages (MailboxOptions.before); `sink` is made below, before anything is sent.
  const mailbox = new PgMailbox(rootDir, url, pool, { now: options.now, registry, before: () => sink.flush(), ...(options.maxInboxBytes ? { maxInboxBytes: options.maxInboxBytes } : {}), ...(options.stamp ? { stamp: options.stamp } : {}) });
  const requests = new RequestStore(rootDir, options.now, docs);
  const location = describeUrl(url);

  const listeners = new Set<Events>();
  const emit = (event: 'board' | 'inbox' | 'error', arg?: unknown) => {
    for (const events of listeners) events.emit(event, arg);
  };
  const pendingTasks = new Set<number>();
  const pendingDocs = new Set<string>();
  // Rows a notification brought are in the replica at once: their `board` is told on the next turn,
  // one for a burst, and never waits behind a read in flight. Told for a row the replica held already
  // too: this process's own write, which its teammates here must be woken for as well.
  let telling = false;
  const tellHeard = () => {
    if (telling) return;
    telling = true;
    setImmediate(() => {
      telling = false;
      emit('board');
    });
  };
  let flushing = false;
  const flush = () => {
    if (flushing) return;
    flushing = true;
    setImmediate(async () => {
      const ids = [...pendingTasks];
      const keys = [...pendingDocs];
      pendingTasks.clear();
      pendingDocs.clear();
      try {
        await Promise.all([ids.length ? tasks.refresh(ids) : 0, keys.length ? docs.refresh(keys) : 0]);
        // A document alone (the registry's heartbeats above all) refreshes the cache and wakes nobody,
        // as on the file board: every teammate beating every 5 s would otherwise wake every other one.
        if (ids.length) emit('board');
      } catch (error) {
        emit('error', error);
      } finally {
        flushing = false;
        if (pendingTasks.size || pendingDocs.size) flush();
      }
    });
  };
  // Followers of the event log wake on its notification (no replica to refresh for it).
  const appended = new EventEmitter();
  appended.setMaxListeners(0);
  const log = new PgEventLog(url, pool, {
    on: (listener) => {
      appended.on('event', listener);
      return () => appended.off('event', listener);
    },
  });
  const replica: ReplicaFeed = {
    onRead: (reader) => {
      const offTasks = tasks.onRead((read) => reader({ tasks: read }));
      const offDocs = docs.onRead((read) => reader({ docs: read }));
      return () => {
        offTasks();
        offDocs();
      };
    },
    take: (read) => {
      // The rows came from this module's own reads (postMessage keeps their shape).
      const changed = read.tasks ? tasks.follow(read.tasks as TasksRead) : 0;
      if (read.docs) docs.follow(read.docs);
      if (changed) emit('board');
    },
  };
  /** What a notification brought, taken; a payload that cannot be is an `error`, not a crash. */
  const taking = (take: () => void) => {
    try {
      take();
    } catch (error) {
      emit('error', error);
    }
  };
  const listener = options.follow ? null : new PgListener(url);
  listener?.on('notification', (payload) => {
    // `<kind>:<value>`, the value a row's JSON too: cut at the first colon, not split at each.
    const colon = payload.indexOf(':');
    const kind = colon < 0 ? payload : payload.slice(0, colon);
    const value = colon < 0 ? '' : payload.slice(colon + 1);
    if (kind === 'event') {
      appended.emit('event');
      return;
    }
    // A task's row itself (schema version 4), or a document itself (version 6): taken as a read's,
    // with no read. A document alone wakes nobody.
    if (kind === 'row') {
      return taking(() => {
        tasks.heard([rowFromNotice(value)]);
        tellHeard();
      });
    }
    if (kind === 'docrow') return taking(() => docs.heard(JSON.parse(value) as { key: string; version: number; doc: unknown }));
    if (kind === 'task') pendingTasks.add(Number(value));
    else if (kind === 'doc') pendingDocs.add(value);
    else if (kind === 'inbox') {
      emit('inbox', value);
      return;
    }
    flush();
  });
  const catchUp = async () => {
    const changed = await tasks.refresh();
    await docs.refresh();
    if (changed > 0) emit('board');
  };
  // Mail sent while the listener was away was told to nobody: after the catch-up every inbox is worth
  // a read (a teammate's host reads only on news, else after its poll).
  const tellEveryInbox = () => {
    for (const name of new Set(registry.names())) emit('inbox', name);
  };
  listener?.on('reconnected', () => void catchUp().then(tellEveryInbox).catch((error: Error) => emit('error', error)));
  listener?.on('error', (error) => emit('error', error));
  await listener?.start();
  const poll = listener ? setInterval(() => void catchUp().catch(() => undefined), POLL_MS) : null;
  poll?.unref();

  const sink = boardSink(log, registry, options);
  tasks.emitTo(sink);
  return {
    location,
    address: url,
    rootDir,
    tasks,
    mailbox,
    registry,
    requests,
    docs,
    blobs: {
      put: async (hash, data) => {
        await withConnectionRetry(url, () => pool.query('INSERT INTO autoteam_blobs (sha256, data) VALUES ($1, $2) ON CONFLICT DO NOTHING', [hash, data]));
      },
      get: async (hash) => {
        const { rows } = await withConnectionRetry(url, () => pool.query<{ data: Buffer }>('SELECT data FROM autoteam_blobs WHERE sha256 = $1', [hash]));
        return rows[0]?.data ?? null;
      },
    },
    log,
    sink,
    lease: (lease = {}) => new LeadLease(rootDir, { ...lease, docs, now: options.now, where: location }),
    events: (eventOptions = {}) => {
      const events = new Events((e) => listeners.delete(e), eventOptions.reconcileMs);
      listeners.add(events);
      return events;
    },
    replica,
    close: async () => {
      await sink.flush();
      if (poll) clearInterval(poll);
      await listener?.close();
      await pool.end().catch(() => undefined);
    },
  };
}

/**
 * Opens `count` of the pool's connections at once, each given back idle as soon as it is made, so a
 * statement asked meanwhile waits for one handshake, not for all (a failure is the next statement's to meet).
 */
function warmPool(pool: pg.Pool, count: number): void {
  for (let i = 0; i < count; i++) {
    pool.connect().then(
      (client) => client.release(),
      () => undefined,
    );
  }
}

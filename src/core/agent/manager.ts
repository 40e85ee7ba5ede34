import { EventEmitter } from 'node:events';
import type { Worker } from 'node:worker_threads';
import { type Board, type BoardEvents, fileBoard } from '../board/board.js';
import type { Mailbox } from '../board/mailbox.js';
import type { RequestStore } from '../board/requests.js';
import type { TaskBoardLike } from '../board/task-rules.js';
import { ConfigError, UnknownRecipientError } from '../errors.js';
import type { ModelSpec } from '../model/factory.js';
import { describeCrashError, writeCrashLog } from './crash-log.js';
import type { ExitReason } from '../events/schema.js';
import type { EventSink } from '../events/emitter.js';
import type { Origin } from './event-order.js';
import { type FromWorker, FromWorkerSchema, type TeammateSeat, type TeammateWorkerInit, type ToWorker } from './worker-protocol.js';
import { seatEnd, startTeammateThread, type TeammateExit, type ThreadError, threadsFor } from './teammate-thread.js';
import { StageRegistry } from '../stages/stage-registry.js';
import { ANY_ROLE } from '../board/task-checks.js';
import type { TeammateSettings } from './settings.js';
import { containment } from '../exec/sandbox.js';
import { BoardWakes } from './wake.js';
import { within } from '../within.js';

export interface ManagerOptions {
  rootDir: string;
  model: ModelSpec;
  settings?: Partial<TeammateSettings>;
  /** The process's one watcher; its events are forwarded to the workers as wake-ups. */
  watcher?: BoardEvents;
  /** The board (default: the file board in rootDir); each worker thread opens its own connection to it. */
  board?: Board;
  /** Name the lead uses when it sends protocol requests. */
  lead?: string;
  /** A model per role (autoteam.config.json `models`); roles not named use `model`. */
  models?: Readonly<Record<string, ModelSpec>>;
  /** The cores `spawnTeam` shares out among threads (default: the machine's, os.availableParallelism()). */
  cores?: number;
}

export type { TeammateExit } from './teammate-thread.js';

/** The last events of a thread kept for its crash log. */
const RECENT_EVENTS = 20;
/** How long a teammate that did not stop in its grace is looked for once more before its shared thread is ended. */
const LAST_LOOK_MS = 50;

/** The shutdown protocol's request: recorded, and sent to `name`'s inbox, which wakes it wherever it runs. */
export async function askToShutDown(mailbox: Mailbox, requests: RequestStore, lead: string, name: string): Promise<void> {
  const request = await requests.create({ kind: 'shutdown', from: lead, to: name });
  await mailbox.send(lead, name, 'Please finish up and shut down.', 'shutdown_request', { requestId: request.id });
}

/** A teammate to start: `model` pins its own model (default: its role's). */
export interface TeammateStart {
  name: string;
  role: string;
  prompt?: string;
  model?: ModelSpec;
}

export interface TeammateHandle {
  name: string;
  role: string;
  worker: Worker;
  exited: Promise<TeammateExit>;
}

export interface ManagerEvents {
  event: [FromWorker];
  exit: [TeammateExit];
  arrived: [name: string]; // a presence or look (the wakes' own): counted for `caughtUp` all the same
}

/**
 * Starts teammates in worker_threads and keeps their status honest: a thread that dies without
 * ending its run is marked `dead` and its task goes straight back to the board.
 */
export class TeammateManager extends EventEmitter<ManagerEvents> {
  private readonly live = new Map<string, TeammateHandle>();
  private readonly board: TaskBoardLike;
  /** Where a thread's death is told (a thread that died cannot say it itself). */
  private readonly sink: EventSink;
  private readonly address: string | undefined;
  private readonly mailbox: Mailbox;
  private readonly requests: RequestStore;
  private readonly unsubscribe: () => void;
  /**
   * Threads this manager terminated itself, and why: that is a forced stop, not a crash. By the
   * teammates it meant to stop; the others of the thread are told whom it was ended for.
   */
  private readonly forced = new WeakMap<Worker, Map<string, string>>();
  /** Threads that reported anything at all (a thread that never did was still starting). */
  private readonly heard = new WeakSet<Worker>();
  /** Messages received from each thread: a message it sent the lead waits for its earlier events (event-order.ts). */
  private readonly received = new WeakMap<Worker, number>();
  /** Which threads a board change wakes: idle and waiting ones at once, busy ones when they are idle again. */
  private readonly boardWakes = new BoardWakes();
  /** The model of each role (the default under ''), changed by setModel for the next threads. */
  private readonly models: Map<string, ModelSpec>;
  /** Whether its threads follow this process's board (ReplicaFeed) rather than listen for themselves. */
  private readonly follows: boolean;

  constructor(private readonly options: ManagerOptions) {
    super();
    const board = options.board ?? fileBoard(options.rootDir, { ...(options.settings?.maxInboxBytes ? { maxInboxBytes: options.settings.maxInboxBytes } : {}) });
    this.board = board.tasks;
    this.sink = board.sink;
    this.mailbox = board.mailbox;
    this.requests = board.requests;
    this.address = board.address === board.rootDir ? undefined : board.address;
    this.models = new Map([['', options.model], ...Object.entries(options.models ?? {})]);
    const onBoard = () => this.wakeAll();
    const onInbox = (name: string) => this.wake(name);
    options.watcher?.on('board', onBoard);
    options.watcher?.on('inbox', onInbox);
    // A PostgreSQL board's threads follow this process's replicas: each read is handed to them before
    // the wake the change brings, and they neither LISTEN nor read for themselves.
    const feed = this.address ? board.replica : undefined;
    this.follows = feed !== undefined;
    const unfollow = feed?.onRead((read) => {
      for (const worker of this.threads()) worker.postMessage({ type: 'replica', read } satisfies ToWorker);
    });
    this.unsubscribe = () => {
      options.watcher?.off('board', onBoard);
      options.watcher?.off('inbox', onInbox);
      unfollow?.();
    };
  }

  /**
   * Starts teammate `name` in a thread of its own. `model` pins this one teammate's model (the scale
   * benchmark gives each its own loopback address); otherwise it starts on its role's.
   */
  spawn(name: string, role: string, prompt?: string, model?: ModelSpec): TeammateHandle {
    return this.spawnTeam([{ name, role, ...(prompt ? { prompt } : {}), ...(model ? { model } : {}) }])[0]!;
  }

  /**
   * Starts a team: each role's teammates share `threadsFor` threads (one each while the machine has
   * a core for every thread), dealt round. The cores are shared among the roles of the pipeline's
   * stages, or those starting if they are more: under load every stage is worked at once, by this
   * process or by another on the machine (a team split over processes, `autoteam worker`s). The
   * handles come in the order of `members`.
   */
  spawnTeam(members: readonly TeammateStart[]): TeammateHandle[] {
    const names = new Set<string>();
    for (const { name } of members) {
      if (this.live.has(name) || names.has(name)) throw new ConfigError(`a teammate named '${name}' is already running`);
      if (!/^[A-Za-z0-9_-]+$/.test(name)) throw new ConfigError(`invalid teammate name '${name}': letters, digits, _ and - only`);
      names.add(name);
    }
    const roles = new Map<string, TeammateStart[]>();
    for (const member of members) roles.set(member.role, [...(roles.get(member.role) ?? []), member]);
    const started = new Map<string, TeammateHandle>();
    const sharing = Math.max(roles.size, StageRegistry.from(this.options.settings?.stages).roles().filter((role) => role !== ANY_ROLE).length);
    for (const [role, ofRole] of roles) {
      const threads = threadsFor(ofRole.length, sharing, this.options.cores);
      for (let thread = 0; thread < threads; thread++) {
        for (const handle of this.startThread(role, ofRole.filter((_, i) => i % threads === thread))) started.set(handle.name, handle);
      }
    }
    return members.map((member) => started.get(member.name)!);
  }

  private startThread(role: string, members: readonly TeammateStart[]): TeammateHandle[] {
    const startedAt = Date.now();
    const seats: TeammateSeat[] = members.map(({ name, prompt, model }) => ({ name, model: model ?? this.modelOf(role), startedAt, ...(prompt ? { prompt } : {}) }));
    const init: TeammateWorkerInit = {
      seats,
      role,
      rootDir: this.options.rootDir,
      ...(this.address ? { board: this.address } : {}),
      ...(this.follows ? { follow: true } : {}),
      settings: this.options.settings ?? {},
      containment: containment(),
    };
    const worker = startTeammateThread(init);
    const names = seats.map((seat) => seat.name);
    // What each teammate said of its own end, and its last error; the thread's last error and recent
    // events are its teammates' alike.
    const ended = new Map<string, { reason: string; why: ExitReason }>();
    const errors = new Map<string, ThreadError>();
    let lastError: ThreadError | null = null;
    const recent: string[] = [];
    const remember = (who: string, line: string) => {
      recent.push(`${new Date().toISOString()} ${names.length > 1 ? `${who} ` : ''}${line}`);
      if (recent.length > RECENT_EVENTS) recent.shift();
    };
    for (const stream of ['stdout', 'stderr'] as const) {
      // Worker output never reaches the terminal directly: it would be printed over the UI. Nothing
      // says which of a thread's teammates wrote it, so it is told as the thread's (those still in it).
      worker[stream].setEncoding('utf8');
      worker[stream].on('data', (text: string) => {
        const name = names.filter((one) => resolvers.has(one)).join(',') || names.join(',');
        remember(name, `${stream}: ${text.trimEnd()}`);
        this.emit('event', { type: 'log', name, stream, text });
      });
    }
    worker.on('message', (raw: unknown) => {
      this.heard.add(worker);
      this.received.set(worker, (this.received.get(worker) ?? 0) + 1);
      const parsed = FromWorkerSchema.safeParse(raw);
      if (!parsed.success) {
        this.emit('event', { type: 'error', name: names.join(','), error: { code: 'BAD_WORKER_MESSAGE', message: `unexpected message from ${names.join(', ')}` } });
        return;
      }
      const event = parsed.data;
      if (event.type === 'gone') return void settle(event.name, null, event.crashed);
      if (event.type === 'exit') ended.set(event.name, { reason: event.reason, why: event.why });
      if (event.type === 'error') {
        lastError = { message: event.error.message, code: event.error.code, detail: event.error.stack ?? `${event.error.code}: ${event.error.message}` };
        errors.set(event.name, lastError);
      }
      if (event.type === 'activity') remember(event.name, `activity: ${event.text}`);
      // The status as it changes is the wakes' alone; what the registry holds follows as `status`.
      if (event.type === 'presence' || event.type === 'looked') {
        if (this.live.get(event.name)?.worker !== worker) return;
        const again = event.type === 'looked' ? this.boardWakes.looked(event.name, role, () => this.board.scanUnclaimed()) : this.boardWakes.status(event.name, event.status);
        if (again) this.wake(event.name, 'board');
        return void this.emit('arrived', event.name);
      }
      if (event.type === 'status') remember(event.name, `status: ${event.status}${event.task ? ` #${event.task}` : ''}${event.reason ? ` (${event.reason})` : ''}`);
      if (event.type === 'error') remember(event.name, `error ${event.error.code}: ${event.error.message}`);
      this.emit('event', event);
    });
    worker.on('error', (error) => {
      lastError = { message: error.message, code: (error as NodeJS.ErrnoException).code ?? error.name, detail: describeCrashError(error) };
    });
    const handles = new Map<string, TeammateHandle>();
    const resolvers = new Map<string, (exit: TeammateExit) => void>();
    /**
     * A teammate's end: its run ended while the thread runs on for others (`code` null; `crashed` when
     * its run threw), or its thread ended.
     */
    const settle = (name: string, code: number | null, crashed = false) => {
      const resolve = resolvers.get(name);
      if (!resolve) return;
      resolvers.delete(name);
      const error = errors.get(name) ?? lastError;
      const { kind, reason, why, withThread } = seatEnd(name, { code, crashed, own: ended.get(name), error, forced: this.forced.get(worker) });
      const handle = handles.get(name)!;
      const bury = async (): Promise<TeammateExit> => {
        const exit: TeammateExit = { name, kind, why, code: code ?? 0, reason, released: [], ...(withThread ? { withThread } : {}) };
        if (kind === 'left') return exit;
        exit.released = await this.handBack(name, kind, reason);
        if (kind === 'crashed') {
          const where = `a worker thread of process ${process.pid}, ${code === null ? 'which runs on for its other teammates' : `exit code ${code}`}`;
          const log = writeCrashLog(this.options.rootDir, { name, role, reason, where, released: exit.released, recent, ...(error ? { error: error.detail } : {}) });
          if (log) exit.crashLog = log;
          this.sink.emit({ type: 'teammate_dead', agent: name, role, reason });
        }
        this.sink.emit({ type: 'teammate_exited', agent: name, role, kind, why, reason, ...(exit.crashLog ? { crashLog: exit.crashLog } : {}) });
        return exit;
      };
      void bury().then((exit) => {
        // Only now may a new teammate take the name: the burial must not touch its fresh claims.
        if (this.live.get(name) === handle) {
          this.live.delete(name);
          this.boardWakes.forget(name);
          // A task it was woken for, or handed back, goes to another of its role now.
          this.wakeAll();
        }
        this.emit('exit', exit);
        resolve(exit);
      });
    };
    worker.once('exit', (code) => {
      for (const name of names) settle(name, code);
    });
    for (const name of names) {
      const exited = new Promise<TeammateExit>((resolve) => resolvers.set(name, resolve));
      const handle: TeammateHandle = { name, role, worker, exited };
      handles.set(name, handle);
      this.live.set(name, handle);
    }
    return [...handles.values()];
  }

  /** The model a thread of `role` starts on. */
  modelOf(role: string): ModelSpec {
    return this.models.get(role) ?? this.models.get('')!;
  }

  /** Threads of `role` work their next tasks on `spec`, and threads started later start on it. */
  setModel(role: string, spec: ModelSpec): void {
    this.models.set(role, spec);
    for (const worker of this.threads((handle) => handle.role === role)) worker.postMessage({ type: 'model', spec } satisfies ToWorker);
  }

  /**
   * Whether the events `from`'s thread posted before sending a message stamped `origin` have all
   * arrived. True for a message of another process or of a thread that is gone: nothing more will come.
   */
  caughtUp(from: string, origin: Origin | null): boolean {
    if (!origin || origin.pid !== process.pid) return true;
    const handle = this.live.get(from);
    if (!handle || handle.worker.threadId !== origin.thread) return true;
    return (this.received.get(handle.worker) ?? 0) >= origin.events;
  }

  handles(): TeammateHandle[] {
    return [...this.live.values()];
  }

  get(name: string): TeammateHandle | undefined {
    return this.live.get(name);
  }

  /** Wakes teammate `name`: for a message sent it (its inbox is read then), or for a change of the board. */
  wake(name: string, why: 'mail' | 'board' = 'mail'): void {
    this.post(name, { type: 'wake', ...(why === 'mail' ? { mail: true } : {}) });
  }

  /**
   * Wakes the idle teammates a board change gives work (`BoardWakes`: one per claimable task of
   * their role), and those waiting on an answer (the change may end their task). One at work is
   * woken when it goes back to idle.
   */
  wakeAll(): void {
    for (const name of this.boardWakes.changed(this.live.values(), () => this.board.scanUnclaimed())) this.wake(name, 'board');
  }

  /**
   * The shutdown protocol: a recorded request in the teammate's inbox, a bounded wait for it to
   * finish its turn and answer, then a stop message, then termination.
   */
  async requestShutdown(name: string, graceMs = 5_000): Promise<TeammateExit | null> {
    const handle = this.live.get(name);
    if (!handle) return null;
    const lead = this.options.lead ?? this.mailbox.registry.read().lead;
    try {
      await askToShutDown(this.mailbox, this.requests, lead, name);
    } catch (error) {
      // Not on the team yet (still starting): there is no inbox to ask through, so stop it.
      if (error instanceof UnknownRecipientError) return this.stop(name, graceMs);
      throw error;
    }
    this.wake(name);
    return this.awaitExit(handle, graceMs);
  }

  async shutdownAll(graceMs = 5_000): Promise<TeammateExit[]> {
    // A protocol that cannot be written (a full disk) still ends in a stop.
    const exits = await Promise.all(this.handles().map((handle) => this.requestShutdown(handle.name, graceMs).catch(() => this.stop(handle.name, graceMs))));
    return exits.filter((exit): exit is TeammateExit => exit !== null);
  }

  /** Stops a teammate now: its model call is aborted and its task handed back. */
  async stop(name: string, graceMs = 3_000): Promise<TeammateExit | null> {
    const handle = this.live.get(name);
    if (!handle) return null;
    this.post(name, { type: 'stop', reason: 'stopped by the lead' });
    return this.awaitExit(handle, graceMs, false);
  }

  async close(graceMs = 3_000): Promise<void> {
    await Promise.all(this.handles().map((handle) => this.stop(handle.name, graceMs)));
    this.unsubscribe();
  }

  private async awaitExit(handle: TeammateHandle, graceMs: number, thenStop = true): Promise<TeammateExit> {
    const first = await within(handle.exited, graceMs, null);
    if (first) return first;
    if (thenStop) {
      this.post(handle.name, { type: 'stop', reason: 'shutdown grace period over' });
      const second = await within(handle.exited, graceMs, null);
      if (second) return second;
    }
    // Ending a shared thread ends the others in it: a `gone` already on its way gets one last look.
    if (this.handles().some((other) => other.worker === handle.worker && other !== handle)) {
      const late = await within(handle.exited, LAST_LOOK_MS, null);
      if (late) return late;
    }
    const waited = thenStop ? graceMs * 2 : graceMs;
    const still = this.heard.has(handle.worker) ? '' : ' (it was still starting)';
    const inTime = `within ${waited < 1000 ? `${waited} ms` : `${Math.round(waited / 1000)} s`} of being asked${still}`;
    const forced = this.forced.get(handle.worker) ?? new Map<string, string>();
    forced.set(handle.name, `terminated: it did not stop ${inTime}`);
    this.forced.set(handle.worker, forced);
    await handle.worker.terminate();
    return handle.exited;
  }

  /** To teammate `name`, in its thread. */
  private post(name: string, message: Extract<ToWorker, { name?: string }>): void {
    this.live.get(name)?.worker.postMessage({ ...message, name } satisfies ToWorker);
  }

  /** Each thread once, however many of its teammates `which` picks. */
  private threads(which: (handle: TeammateHandle) => boolean = () => true): Worker[] {
    return [...new Set(this.handles().filter(which).map((handle) => handle.worker))];
  }

  /**
   * A thread that did not end its own run: whatever it held goes back on the board at once, and the
   * member is marked dead (a crash) or shut down (terminated by this host, which chose to stop it).
   */
  private async handBack(name: string, kind: 'terminated' | 'crashed', reason: string): Promise<number[]> {
    await this.mailbox.registry.setStatus(name, kind === 'crashed' ? 'dead' : 'shutdown', { task: null, reason }).catch(() => undefined);
    return this.board.reclaimAllFrom(name, kind === 'crashed' ? `owner ${name} died: ${reason}` : `owner ${name} was ${reason}`, kind === 'crashed' ? 'owner_dead' : 'stopped').catch(() => []);
  }
}

import { EventEmitter } from 'node:events';
import { Worker } from 'node:worker_threads';
import { type Board, type BoardEvents, fileBoard } from '../board/board.js';
import type { Mailbox } from '../board/mailbox.js';
import type { RequestStore } from '../board/requests.js';
import type { TaskBoardLike } from '../board/task-rules.js';
import { ConfigError, UnknownRecipientError } from '../errors.js';
import type { ModelSpec } from '../model/factory.js';
import type { Origin } from './event-order.js';
import { type FromWorker, FromWorkerSchema, type TeammateWorkerInit, type ToWorker } from './worker-protocol.js';
import type { TeammateSettings } from './settings.js';

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
}

export interface TeammateExit {
  name: string;
  /** The teammate ended its own run (protocol, idle timeout, stop); false means the thread died. */
  clean: boolean;
  code: number;
  reason: string;
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
}

/** Where the worker entry is: compiled JS in production, TypeScript (through tsx) under tests. */
function workerEntry(): { url: URL; viaTsx: boolean } {
  const here = import.meta.url;
  if (here.endsWith('.ts')) return { url: new URL('../../worker/teammate-worker.ts', here), viaTsx: true };
  return { url: new URL('../../worker/teammate-worker.js', here), viaTsx: false };
}

/**
 * Starts teammates in worker_threads and keeps their status honest: a thread that dies without
 * ending its run is marked `dead` and its task goes straight back to the board.
 */
export class TeammateManager extends EventEmitter<ManagerEvents> {
  private readonly live = new Map<string, TeammateHandle>();
  private readonly board: TaskBoardLike;
  private readonly address: string | undefined;
  private readonly mailbox: Mailbox;
  private readonly requests: RequestStore;
  private readonly unsubscribe: () => void;
  /** Messages received from each thread: a message it sent the lead waits for its earlier events (event-order.ts). */
  private readonly received = new WeakMap<Worker, number>();
  /** The model of each role (the default under ''), changed by setModel for the next threads. */
  private readonly models: Map<string, ModelSpec>;

  constructor(private readonly options: ManagerOptions) {
    super();
    const board = options.board ?? fileBoard(options.rootDir);
    this.board = board.tasks;
    this.mailbox = board.mailbox;
    this.requests = board.requests;
    this.address = board.address === board.rootDir ? undefined : board.address;
    this.models = new Map([['', options.model], ...Object.entries(options.models ?? {})]);
    const onBoard = () => this.wakeAll();
    const onInbox = (name: string) => this.wake(name);
    options.watcher?.on('board', onBoard);
    options.watcher?.on('inbox', onInbox);
    this.unsubscribe = () => {
      options.watcher?.off('board', onBoard);
      options.watcher?.off('inbox', onInbox);
    };
  }

  spawn(name: string, role: string, prompt?: string): TeammateHandle {
    if (this.live.has(name)) throw new ConfigError(`a teammate named '${name}' is already running`);
    if (!/^[A-Za-z0-9_-]+$/.test(name)) throw new ConfigError(`invalid teammate name '${name}': letters, digits, _ and - only`);
    const init: TeammateWorkerInit = {
      name,
      role,
      rootDir: this.options.rootDir,
      ...(this.address ? { board: this.address } : {}),
      settings: this.options.settings ?? {},
      model: this.modelOf(role),
      ...(prompt ? { prompt } : {}),
    };
    const entry = workerEntry();
    const worker = entry.viaTsx
      ? new Worker(
          `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((m) => { m.register(); return import(${JSON.stringify(entry.url.href)}); });`,
          { eval: true, workerData: init, stdout: true, stderr: true },
        )
      : new Worker(entry.url, { workerData: init, stdout: true, stderr: true });
    let ended: string | null = null;
    let lastError: string | null = null;
    for (const stream of ['stdout', 'stderr'] as const) {
      // Worker output never reaches the terminal directly: it would be printed over the UI.
      worker[stream].setEncoding('utf8');
      worker[stream].on('data', (text: string) => this.emit('event', { type: 'log', name, stream, text }));
    }
    worker.on('message', (raw: unknown) => {
      this.received.set(worker, (this.received.get(worker) ?? 0) + 1);
      const parsed = FromWorkerSchema.safeParse(raw);
      if (!parsed.success) {
        this.emit('event', { type: 'error', name, error: { code: 'BAD_WORKER_MESSAGE', message: `unexpected message from ${name}` } });
        return;
      }
      if (parsed.data.type === 'exit') ended = parsed.data.reason;
      if (parsed.data.type === 'error') lastError = parsed.data.error.message;
      this.emit('event', parsed.data);
    });
    worker.on('error', (error) => {
      lastError = error.message;
    });
    const exited = new Promise<TeammateExit>((resolve) => {
      worker.once('exit', (code) => {
        const exit: TeammateExit = {
          name,
          clean: ended !== null,
          code,
          reason: ended ?? `thread died (exit code ${code})${lastError ? `: ${lastError}` : ''}`,
        };
        const settle = exit.clean ? Promise.resolve() : this.buryDead(name, exit.reason);
        void settle.finally(() => {
          // Only now may a new teammate take the name: the burial must not touch its fresh claims.
          if (this.live.get(name) === handle) this.live.delete(name);
          this.emit('exit', exit);
          resolve(exit);
        });
      });
    });
    const handle: TeammateHandle = { name, role, worker, exited };
    this.live.set(name, handle);
    return handle;
  }

  /** The model a thread of `role` starts on. */
  modelOf(role: string): ModelSpec {
    return this.models.get(role) ?? this.models.get('')!;
  }

  /** Threads of `role` work their next tasks on `spec`, and threads started later start on it. */
  setModel(role: string, spec: ModelSpec): void {
    this.models.set(role, spec);
    for (const handle of this.live.values()) if (handle.role === role) handle.worker.postMessage({ type: 'model', spec } satisfies ToWorker);
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

  wake(name: string): void {
    this.post(name, { type: 'wake' });
  }

  wakeAll(): void {
    for (const name of this.live.keys()) this.wake(name);
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
      await this.mailbox.send(lead, name, 'Please finish up and shut down.', 'shutdown_request', {
        requestId: (await this.requests.create({ kind: 'shutdown', from: lead, to: name })).id,
      });
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
    const timeout = (ms: number) => new Promise<null>((resolve) => setTimeout(() => resolve(null), ms).unref());
    const first = await Promise.race([handle.exited, timeout(graceMs)]);
    if (first) return first;
    if (thenStop) {
      this.post(handle.name, { type: 'stop', reason: 'shutdown grace period over' });
      const second = await Promise.race([handle.exited, timeout(graceMs)]);
      if (second) return second;
    }
    await handle.worker.terminate();
    return handle.exited;
  }

  private post(name: string, message: ToWorker): void {
    this.live.get(name)?.worker.postMessage(message);
  }

  /** A thread that died: mark the member dead and put whatever it held back on the board at once. */
  private async buryDead(name: string, reason: string): Promise<void> {
    await this.mailbox.registry.setStatus(name, 'dead', { task: null, reason }).catch(() => undefined);
    await this.board.reclaimAllFrom(name, `owner ${name} died: ${reason}`);
  }
}

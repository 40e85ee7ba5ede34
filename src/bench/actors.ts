import { type ChildProcess, spawn } from 'node:child_process';
import readline from 'node:readline';
import { Worker } from 'node:worker_threads';
import { ACTOR_FILE, type ActorJob, type ActorMessage, type ActorWorkerData } from './board-actor.js';

/** Handle on a benchmark actor (thread or process); messages are buffered so no waiter misses one. */
export class ActorHandle<R = unknown> {
  private readonly messages: ActorMessage[] = [];
  private readonly listeners = new Set<(message: ActorMessage) => void>();
  private exited = false;
  private stderr = '';
  readonly result: Promise<R>;

  private constructor(
    readonly label: string,
    private readonly command: (line: string) => void,
    readonly child: ChildProcess | null,
    readonly worker: Worker | null,
  ) {
    this.result = new Promise<R>((resolve, reject) => {
      this.listeners.add((message) => {
        if (message.type === 'result') resolve(message.value as R);
        if (message.type === 'error') reject(new Error(`${label}: ${message.error.code}: ${message.error.message}`));
        if (message.type === 'event' && message.name === '__exit') {
          reject(new Error(`${label} exited (${String(message.data)}) without a result${this.stderr ? `:\n${this.stderr}` : ''}`));
        }
      });
    });
    this.result.catch(() => {});
  }

  static thread<R>(label: string, job: ActorJob): ActorHandle<R> {
    const worker = new Worker(ACTOR_FILE, { workerData: { benchActor: job } satisfies ActorWorkerData });
    const handle = new ActorHandle<R>(label, (line) => worker.postMessage(line), null, worker);
    worker.on('message', (message: ActorMessage) => handle.receive(message));
    worker.on('error', (error) => handle.receive({ type: 'error', error: { code: 'WORKER', message: error.stack ?? String(error) } }));
    worker.on('exit', (code) => handle.exit(code));
    return handle;
  }

  static process<R>(label: string, job: ActorJob): ActorHandle<R> {
    const child = spawn(process.execPath, [ACTOR_FILE, JSON.stringify(job)], { stdio: ['pipe', 'pipe', 'pipe'] });
    const handle = new ActorHandle<R>(label, (line) => child.stdin.write(`${line}\n`), child, null);
    readline.createInterface({ input: child.stdout }).on('line', (line) => {
      if (line.startsWith('{')) handle.receive(JSON.parse(line) as ActorMessage);
    });
    child.stderr.on('data', (chunk) => (handle.stderr += String(chunk)));
    child.on('close', (code, signal) => handle.exit(code ?? signal));
    return handle;
  }

  send(command: string): void {
    this.command(command);
  }

  /** Calls `listener` for every message from now on; returns an unsubscribe function. */
  subscribe(listener: (message: ActorMessage) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Resolves with the first message (already received or future) that matches. */
  waitFor(match: (message: ActorMessage) => boolean): Promise<ActorMessage> {
    const found = this.messages.find(match);
    if (found) return Promise.resolve(found);
    if (this.exited) return Promise.reject(new Error(`${this.label} has exited`));
    return new Promise((resolve, reject) => {
      const stop = this.subscribe((message) => {
        if (message.type === 'event' && message.name === '__exit') {
          stop();
          reject(new Error(`${this.label} exited${this.stderr ? `:\n${this.stderr}` : ''}`));
        } else if (match(message)) {
          stop();
          resolve(message);
        }
      });
    });
  }

  ready(): Promise<ActorMessage> {
    return this.waitFor((message) => message.type === 'ready');
  }

  private receive(message: ActorMessage): void {
    this.messages.push(message);
    for (const listener of [...this.listeners]) listener(message);
  }

  private exit(code: number | string | null): void {
    this.exited = true;
    this.receive({ type: 'event', name: '__exit', data: code });
  }
}

/** Waits until every actor is loaded, then starts them all; returns the start time. */
export async function startTogether(actors: ActorHandle[]): Promise<number> {
  await Promise.all(actors.map((actor) => actor.ready()));
  const start = performance.now();
  for (const actor of actors) actor.send('go');
  return start;
}

import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { ActorMessage } from './board-actor.js';
import type { BoardJob } from './board-jobs.js';
import { tempDir } from './temp-dirs.js';

const here = path.dirname(fileURLToPath(import.meta.url));
export const repoRoot = path.resolve(here, '..', '..');
const actorFile = path.join(here, 'board-actor.ts');
const bootstrap = new URL('./ts-worker.mjs', import.meta.url);

/** A running actor: its messages are buffered so a waiter never misses one sent earlier. */
export class Actor<R = unknown> {
  private readonly messages: ActorMessage[] = [];
  private readonly waiters: Array<() => void> = [];
  private stderr = '';
  private hasExited = false;
  readonly result: Promise<R>;
  readonly exited: Promise<number | null>;

  private constructor(
    readonly label: string,
    private readonly sendGo: () => void,
    readonly child: ChildProcess | null,
    readonly worker: Worker | null,
    subscribe: (onMessage: (m: ActorMessage) => void, onExit: (code: number | null) => void) => void,
  ) {
    let exitResolve!: (code: number | null) => void;
    this.exited = new Promise((resolve) => (exitResolve = resolve));
    this.result = new Promise<R>((resolve, reject) => {
      subscribe(
        (message) => {
          this.messages.push(message);
          for (const wake of this.waiters.splice(0)) wake();
          if (message.type === 'result') resolve(message.value as R);
          if (message.type === 'error') reject(new Error(`${label}: ${message.error.code}: ${message.error.message}`));
        },
        (code) => {
          this.hasExited = true;
          exitResolve(code);
          for (const wake of this.waiters.splice(0)) wake();
          reject(new Error(`${label} exited (${code}) without a result${this.stderr ? `:\n${this.stderr}` : ''}`));
        },
      );
    });
    this.result.catch(() => {});
  }

  static thread<R>(label: string, job: BoardJob, barrier = false): Actor<R> {
    const worker = new Worker(bootstrap, {
      workerData: { entry: pathToFileURL(actorFile).href, job, barrier },
    });
    return new Actor<R>(label, () => worker.postMessage('go'), null, worker, (onMessage, onExit) => {
      worker.on('message', onMessage);
      worker.on('error', (error) => onMessage({ type: 'error', error: { code: 'WORKER', message: error.stack ?? String(error) } }));
      worker.on('exit', onExit);
    });
  }

  static process<R>(label: string, job: BoardJob, barrier = false): Actor<R> {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', actorFile, JSON.stringify(job), ...(barrier ? ['--barrier'] : [])],
      { cwd: repoRoot, stdio: ['pipe', 'pipe', 'pipe'] },
    );
    const actor: Actor<R> = new Actor<R>(label, () => child.stdin.write('go\n'), child, null, (onMessage, onExit) => {
      readline.createInterface({ input: child.stdout! }).on('line', (line) => {
        if (line.startsWith('{')) onMessage(JSON.parse(line) as ActorMessage);
      });
      child.stderr!.on('data', (chunk) => (actor.stderr += String(chunk)));
      child.on('close', (code, signal) => onExit(code ?? (signal ? -1 : null)));
    });
    return actor;
  }

  go(): void {
    this.sendGo();
  }

  /** Resolves when a message of `type` (and event `name`) has arrived; rejects if the actor exits first. */
  async waitFor(type: ActorMessage['type'], name?: string): Promise<ActorMessage> {
    for (;;) {
      const found = this.messages.find((m) => m.type === type && (name === undefined || (m.type === 'event' && m.name === name)));
      if (found) return found;
      if (this.hasExited) {
        throw new Error(`${this.label} exited before '${name ?? type}'${this.stderr ? `:\n${this.stderr}` : ''}`);
      }
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }
}

/** Starts every actor, waits until all are loaded, then releases them together. */
export async function startTogether(actors: Actor[]): Promise<void> {
  await Promise.all(actors.map((actor) => actor.waitFor('ready')));
  for (const actor of actors) actor.go();
}

export function tempRoot(prefix = 'autoteam-board-'): string {
  return tempDir(prefix);
}

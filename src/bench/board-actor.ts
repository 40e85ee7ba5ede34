/**
 * The benchmark's racers, run from dist/bench as a worker thread or as a child process
 * (`node dist/bench/board-actor.js '<job json>'`). Every actor reports `ready` once loaded and
 * starts on `go` (postMessage, or a `go` line on stdin), so all racers start together.
 * Messages to the parent: postMessage in a thread, one JSON line on stdout in a process.
 */
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { Mailbox } from '../core/board/index.js';
import { type OpenedTaskStore, openTaskStore } from '../core/board/open.js';
import { serializeError } from '../core/errors.js';
import { epochMs } from './section.js';

export type ClaimMode = 'next' | 'scan';

/**
 * How a claimer starts. Warm (the measured race): it opens and reads the board, and makes `warmup`
 * claims of role `warmup` on `warmupRoot` (the board itself, or a scratch board) before it says
 * ready, as a long-running teammate has; then it races for role `racer`. `cold`: it opens the board
 * only at the start signal and claims at once.
 */
export interface ClaimStart {
  cold?: boolean;
  warmup: number;
  warmupRoot?: string;
}

/** The role of the tasks raced for, and of those claimed to warm up. */
export const RACE_ROLE = 'racer';
export const WARMUP_ROLE = 'warmup';

export type ActorJob =
  /** Claims until nothing is left (`root`: a directory or a postgres:// URL). */
  | ({ kind: 'claim'; root: string; owner: string; mode: ClaimMode } & ClaimStart)
  /** A process that runs `threads` claim workers and reports their claims together. */
  /** `inProcess`: the claimers are concurrent async loops on one connection pool, not threads. */
  | ({ kind: 'claim-hub'; root: string; prefix: string; threads: number; mode: ClaimMode; inProcess?: boolean } & ClaimStart)
  | { kind: 'send'; root: string; from: string; to: string; count: number }
  /** Creates one task per `create` line on stdin, reporting when it started; `exit` ends it. */
  | { kind: 'creator'; root: string };

export type ActorMessage =
  | { type: 'ready' }
  | { type: 'event'; name: string; data?: unknown }
  | { type: 'result'; value: unknown }
  | { type: 'error'; error: { code: string; message: string } };

export interface ClaimReport {
  claimed: Record<string, number[]>;
  errors: string[];
  /** Milliseconds each claimer took to open the board (and read it, for the file board). */
  openMs: number[];
}

export const ACTOR_FILE = fileURLToPath(import.meta.url);

/** What a worker thread running this file receives as workerData. */
export interface ActorWorkerData {
  benchActor: ActorJob;
}

function post(message: ActorMessage): void {
  if (isMainThread) process.stdout.write(`${JSON.stringify(message)}\n`);
  else parentPort!.postMessage(message);
}

/** Commands from the parent: `go`, and for the creator `create` / `exit`. */
function onCommand(handler: (command: string) => void): () => void {
  if (!isMainThread) {
    const listener = (message: unknown) => handler(String(message));
    parentPort!.on('message', listener);
    return () => parentPort!.off('message', listener);
  }
  const lines = readline.createInterface({ input: process.stdin });
  lines.on('line', (line) => handler(line.trim()));
  return () => {
    lines.close();
    process.stdin.destroy();
  };
}

/**
 * Waits for `go`. A `catch-up` before it (a race's claimers, once all are warm) runs `catchUp` —
 * reading what the others wrote while warming up — and answers with a `caught-up` event.
 */
function waitForGo(catchUp: () => Promise<void> = async () => {}): Promise<void> {
  return new Promise((resolve) => {
    const stop = onCommand((command) => {
      if (command === 'catch-up') void catchUp().then(() => post({ type: 'event', name: 'caught-up' }));
      if (command !== 'go') return;
      stop();
      resolve();
    });
  });
}

function nextCommand(expected: string): Promise<void> {
  return new Promise((resolve) => {
    const stop = onCommand((command) => {
      if (command !== expected) return;
      stop();
      resolve();
    });
  });
}

/** Opens the board (timed) and, unless cold, warms up on it. */
async function openClaimer(root: string, owner: string, start: ClaimStart, poolSize: number): Promise<{ store: OpenedTaskStore; openMs: number }> {
  const t0 = performance.now();
  const store = await openTaskStore(root, { poolSize });
  await store.refresh();
  await store.list();
  const openMs = performance.now() - t0;
  if (!start.cold) await warmUp(start.warmupRoot && start.warmupRoot !== root ? start.warmupRoot : store, [owner], start.warmup);
  return { store, openMs };
}

/** `count` claims of role `warmup` per owner, on `board` (a store, or the location of a scratch board). */
async function warmUp(board: OpenedTaskStore | string, owners: string[], count: number): Promise<void> {
  const store = typeof board === 'string' ? await openTaskStore(board, { poolSize: owners.length }) : board;
  try {
    await Promise.all(owners.map(async (owner) => {
      for (let i = 0; i < count; i++) await store.claimNext(owner, WARMUP_ROLE);
    }));
  } finally {
    if (store !== board) await store.close?.();
  }
}

/**
 * Claims until nothing is left. `next`: claimNext. `scan`: what a claimer without claimNext does —
 * scan the unclaimed tasks, then claim(id) one of them (a random one, so claimers spread out).
 */
async function claimWith(board: OpenedTaskStore, owner: string, mode: ClaimMode): Promise<Record<string, number[]>> {
  const mine: number[] = [];
  for (;;) {
    if (mode === 'next') {
      const result = await board.claimNext(owner, RACE_ROLE);
      if (!result) break;
      if (result.ok) mine.push(result.task.id);
      continue;
    }
    await board.refresh();
    const open = await board.scanUnclaimed(RACE_ROLE);
    if (open.length === 0) break;
    const pick = open[Math.floor(Math.random() * open.length)]!;
    const result = await board.claim(pick.id, owner, { role: RACE_ROLE, tryOnce: true });
    if (result.ok) mine.push(pick.id);
  }
  return { [owner]: mine };
}

/** One claimer in its own thread (or process): ready once warm (or at once when cold), then races. */
async function claimer(job: Extract<ActorJob, { kind: 'claim' }>): Promise<ClaimReport> {
  let opened = job.cold ? null : await openClaimer(job.root, job.owner, job, 1);
  post({ type: 'ready' });
  await waitForGo(async () => {
    await opened?.store.refresh();
    await opened?.store.list();
  });
  const errors: string[] = [];
  let claimed: Record<string, number[]> = { [job.owner]: [] };
  try {
    opened ??= await openClaimer(job.root, job.owner, job, 1);
    claimed = await claimWith(opened.store, job.owner, job.mode);
  } catch (error) {
    errors.push(`${job.owner}: ${(error as Error).message}`);
  } finally {
    await opened?.store.close?.();
  }
  return { claimed, errors, openMs: opened ? [opened.openMs] : [] };
}

function merge(reports: ClaimReport[]): ClaimReport {
  return {
    claimed: Object.assign({}, ...reports.map((r) => r.claimed)),
    errors: reports.flatMap((r) => r.errors),
    openMs: reports.flatMap((r) => r.openMs),
  };
}

async function claimHub(job: Extract<ActorJob, { kind: 'claim-hub' }>): Promise<ClaimReport> {
  if (job.inProcess) {
    const owners = Array.from({ length: job.threads }, (_, i) => `${job.prefix}c${i}`);
    const { store, openMs } = await openClaimer(job.root, owners[0]!, { ...job, cold: true }, job.threads);
    if (!job.cold) await warmUp(job.warmupRoot && job.warmupRoot !== job.root ? job.warmupRoot : store, owners, job.warmup);
    post({ type: 'ready' });
    await waitForGo(async () => {
      await store.refresh();
      await store.list();
    });
    try {
      const reports = await Promise.all(
        owners.map((owner) =>
          claimWith(store, owner, job.mode).then(
            (claimed): ClaimReport => ({ claimed, errors: [], openMs: [] }),
            (error: Error): ClaimReport => ({ claimed: { [owner]: [] }, errors: [`${owner}: ${error.message}`], openMs: [] }),
          ),
        ),
      );
      return { ...merge(reports), openMs: [openMs] };
    } finally {
      await store.close?.();
    }
  }
  const workers = Array.from({ length: job.threads }, (_, i) => {
    const claim: ActorJob = { kind: 'claim', root: job.root, owner: `${job.prefix}t${i}`, mode: job.mode, cold: job.cold, warmup: job.warmup, warmupRoot: job.warmupRoot };
    const worker = new Worker(new URL(import.meta.url), { workerData: { benchActor: claim } satisfies ActorWorkerData });
    const ready = new Promise<void>((resolve, reject) => {
      worker.on('message', (message: ActorMessage) => {
        if (message.type === 'ready') resolve();
      });
      worker.on('error', reject);
    });
    const done = new Promise<ClaimReport>((resolve, reject) => {
      worker.on('message', (message: ActorMessage) => {
        if (message.type === 'result') resolve(message.value as ClaimReport);
        if (message.type === 'error') reject(new Error(message.error.message));
      });
      worker.on('error', reject);
      worker.on('exit', (code) => reject(new Error(`claim worker exited ${code}`)));
    });
    const caughtUp = () =>
      new Promise<void>((resolve) => {
        const listener = (message: ActorMessage) => {
          if (message.type !== 'event' || message.name !== 'caught-up') return;
          worker.off('message', listener);
          resolve();
        };
        worker.on('message', listener);
        worker.postMessage('catch-up');
      });
    return { worker, ready, done, caughtUp };
  });
  await Promise.all(workers.map((w) => w.ready));
  post({ type: 'ready' });
  await waitForGo(async () => {
    await Promise.all(workers.map((w) => w.caughtUp()));
  });
  for (const w of workers) w.worker.postMessage('go');
  return merge(await Promise.all(workers.map((w) => w.done)));
}

async function creator(root: string): Promise<number> {
  const board = await openTaskStore(root, { poolSize: 1 });
  post({ type: 'ready' });
  let created = 0;
  let queue = Promise.resolve();
  await new Promise<void>((resolve) => {
    const stop = onCommand((command) => {
      if (command === 'exit') {
        stop();
        queue.then(resolve, resolve);
      } else if (command === 'create') {
        queue = queue.then(async () => {
          const t0 = epochMs();
          const task = await board.create({ subject: `bench ${created}`, by: 'bench' });
          created++;
          post({ type: 'event', name: 'created', data: { id: task.id, t0, t1: epochMs() } });
        });
      }
    });
  });
  await board.close?.();
  return created;
}

async function run(job: ActorJob): Promise<unknown> {
  switch (job.kind) {
    case 'claim-hub':
      return claimHub(job);
    case 'creator':
      return creator(job.root);
    case 'claim':
      return claimer(job);
    case 'send': {
      const mailbox = new Mailbox(job.root);
      post({ type: 'ready' });
      await nextCommand('go');
      for (let i = 0; i < job.count; i++) await mailbox.send(job.from, job.to, `${job.from}:${i}`);
      return job.count;
    }
  }
}

async function main(): Promise<void> {
  const job: ActorJob = isMainThread ? JSON.parse(process.argv[2]!) : (workerData as ActorWorkerData).benchActor;
  try {
    post({ type: 'result', value: await run(job) });
  } catch (error) {
    post({ type: 'error', error: serializeError(error) });
  }
}

// Only when run as an actor: importing this module (for ACTOR_FILE) has no side effects.
const isActor = isMainThread
  ? process.argv[1] === ACTOR_FILE
  : Boolean((workerData as Partial<ActorWorkerData> | null)?.benchActor);
if (isActor) await main();

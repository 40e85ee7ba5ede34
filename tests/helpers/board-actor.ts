/**
 * Entry of a test actor, as a worker thread (via ts-worker.mjs) or as a child process
 * (`node --import tsx board-actor.ts '<job json>' [--barrier]`). It opens what its job needs, reports `ready`, waits for `go`
 * when asked to (so every racer starts together), runs its job and reports `result` or `error`.
 * Worker: messages over postMessage. Child: one JSON message per stdout line, `go` on stdin.
 */
import readline from 'node:readline';
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import { serializeError } from '../../src/core/errors.js';
import { type BoardJob, prepareBoardJob } from './board-jobs.js';

export type ActorMessage =
  | { type: 'ready' }
  | { type: 'event'; name: string; data?: unknown }
  | { type: 'result'; value: unknown }
  | { type: 'error'; error: { code: string; message: string } };

const job: BoardJob = isMainThread ? JSON.parse(process.argv[2]!) : (workerData as { job: BoardJob }).job;
const barrier: boolean = isMainThread ? process.argv.includes('--barrier') : Boolean(workerData.barrier);

function post(message: ActorMessage): void {
  if (isMainThread) process.stdout.write(`${JSON.stringify(message)}\n`);
  else parentPort!.postMessage(message);
}

function waitForGo(): Promise<void> {
  return new Promise((resolve) => {
    if (!isMainThread) {
      parentPort!.once('message', () => resolve());
      return;
    }
    const lines = readline.createInterface({ input: process.stdin });
    lines.on('line', (line) => {
      if (line.trim() === 'go') {
        lines.close();
        resolve();
      }
    });
  });
}

try {
  const run = await prepareBoardJob(job, (name, data) => post({ type: 'event', name, data }));
  post({ type: 'ready' });
  if (barrier) await waitForGo();
  post({ type: 'result', value: await run() });
} catch (error) {
  post({ type: 'error', error: serializeError(error) });
}
if (isMainThread) process.stdin.destroy();

import os from 'node:os';
import { pathToFileURL } from 'node:url';
import v8 from 'node:v8';
import { Worker } from 'node:worker_threads';
import type { ModelSpec } from '../model/factory.js';
import type { TeammateWorkerInit } from './worker-protocol.js';

/**
 * The young generation of a teammate thread's heap, in MB per teammate it runs. V8 sizes it per
 * isolate (up to 32 MB of semi-spaces on 64-bit) and keeps it once grown; a teammate allocates little
 * between model calls, so a small one costs a few more scavenges and saves most of that memory per
 * idle teammate.
 */
const YOUNG_GENERATION_MB_PER_TEAMMATE = 4;

/**
 * Teammate threads start without V8's memory reducer. It collects two or three more times some 8 s
 * after a thread's last full collection, which for an idle teammate is CPU spent on nothing: the
 * thread's own collection once it falls idle (worker/idle-collector.ts) has given the memory back.
 * V8 reads the flag when an isolate's heap is set up, so it holds for the threads started after
 * this, not for the thread that sets it.
 */
let reducerOff = false;
function withoutMemoryReducer(): void {
  if (reducerOff) return;
  reducerOff = true;
  v8.setFlagsFromString('--no-memory-reducer');
}

/**
 * How many threads `count` teammates of one role get when `groups` roles share a machine of `cores`
 * cores: one each while the cores go round, else the role's share of the cores (at least one). Every thread is an isolate of its own — its own heap, its own compiled code, its
 * own collections — and on two cores twelve of them spent more time waiting for a core than working:
 * the scale bench's 16 pipelines on 12 teammates took 224–275 ms of runtime overhead each in twelve
 * threads and 85–94 ms in three; split over three processes of four, 150–160 ms in two threads each
 * and 90–103 ms in one.
 */
export function threadsFor(count: number, groups: number, cores: number = os.availableParallelism()): number {
  return Math.max(1, Math.min(count, Math.floor(cores / Math.max(1, groups))));
}

/** A model from a TypeScript file (a test's fake): only a thread with tsx's loader can import it. */
function loadsTypeScript(model: ModelSpec): boolean {
  if (model.kind === 'module') return /\.[cm]?tsx?$/.test(model.path);
  return model.kind === 'record' && loadsTypeScript(model.inner);
}

/**
 * Where the worker entry is: the bundled build in production (dist/worker/bundle, made by
 * scripts/build-worker.mjs), TypeScript (through tsx) under tests — unless the tests name that build
 * in AUTOTEAM_TEST_WORKER (vitest.config.ts does, when dist/ is newer than src/) and no model of the
 * thread is a TypeScript module only tsx can load: the thread then starts in a third of the time,
 * without tsx's loader.
 */
function workerEntry(models: readonly ModelSpec[]): { url: URL; viaTsx: boolean } {
  const here = import.meta.url;
  if (!here.endsWith('.ts')) return { url: new URL('../../worker/bundle/teammate-worker.js', here), viaTsx: false };
  const built = process.env.AUTOTEAM_TEST_WORKER;
  if (built && !models.some(loadsTypeScript)) return { url: pathToFileURL(built), viaTsx: false };
  return { url: new URL('../../worker/teammate-worker.ts', here), viaTsx: true };
}

/** Starts a thread running `init`'s teammates, its output kept from the terminal (`stdout`/`stderr` are streams). */
export function startTeammateThread(init: TeammateWorkerInit): Worker {
  const entry = workerEntry(init.seats.map((seat) => seat.model));
  const resourceLimits = { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB_PER_TEAMMATE * init.seats.length };
  withoutMemoryReducer();
  return entry.viaTsx
    ? new Worker(
        `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((m) => { m.register(); return import(${JSON.stringify(entry.url.href)}); });`,
        { eval: true, workerData: init, stdout: true, stderr: true, resourceLimits },
      )
    : new Worker(entry.url, { workerData: init, stdout: true, stderr: true, resourceLimits });
}

import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import v8 from 'node:v8';
import { Worker } from 'node:worker_threads';
import type { ExitReason } from '../events/schema.js';
import type { ModelSpec } from '../model/factory.js';
import { OWN_PACKAGE } from '../own-package.js';
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
 * cores: one each while the cores go round, else the role's share of the cores (at least one). Every
 * thread is an isolate of its own — its own heap, its own compiled code, its own collections — and on
 * two cores twelve of them spent more time waiting for a core than working:
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
  if (!here.endsWith('.ts')) return { url: pathToFileURL(path.join(OWN_PACKAGE.root, 'dist', 'worker', 'bundle', 'teammate-worker.js')), viaTsx: false };
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

export interface TeammateExit {
  name: string;
  /**
   * `left`: the teammate ended its own run (protocol, idle timeout, stop). `terminated`: the host ended
   * a thread that did not stop when asked (one still starting, under load), or one it shared with
   * such a teammate (`withThread`). `crashed`: the thread died, or its run threw.
   */
  kind: 'left' | 'terminated' | 'crashed';
  /** Why it ended, as a kind (the words are in `reason`). */
  why: ExitReason;
  code: number;
  reason: string;
  /** Tasks handed back to the board because the thread did not end its own run. */
  released: number[];
  /** For a crash: its log, `.team/crash/<name>-<time>.log`, relative to the board folder. */
  crashLog?: string;
  /** Ended with its thread, which the host ended to stop this other teammate of it (a shared thread). */
  withThread?: string;
}

/** An error a thread reported, as the host keeps it for a crash log. */
export interface ThreadError {
  message: string;
  code: string;
  detail: string;
}

/** How a teammate of a thread ended, as the host heard it. */
export interface SeatEnding {
  /** The thread's exit code; null while the thread runs on for others (the teammate said `gone`). */
  code: number | null;
  /** Its run threw (said with `gone` while the thread runs on). */
  crashed: boolean;
  /** What the teammate said of its own end (`exit`), if it did. */
  own?: { reason: string; why: ExitReason } | undefined;
  /** Its last error, or the thread's. */
  error: ThreadError | null;
  /** The teammates the host ended the thread to stop, with why (null: it did not). */
  forced?: ReadonlyMap<string, string> | undefined;
}

/**
 * A teammate's exit from how it ended: its own word first; else a run that ended or threw while the
 * thread ran on; else the host's forced end (for it, or for another of its thread: `withThread`); else
 * the thread's death.
 */
export function seatEnd(name: string, end: SeatEnding): { kind: 'left' | 'terminated' | 'crashed'; reason: string; why: ExitReason; withThread?: string } {
  const { code, own, error, forced } = end;
  if (own) return { kind: 'left', ...own };
  if (code === null && !end.crashed) return { kind: 'left', reason: 'its run ended', why: 'stopped' };
  // A forced end is the thread's: a teammate that said `gone` before it was not ended by it.
  if (code !== null && forced?.size) {
    const mine = forced.get(name);
    if (mine) return { kind: 'terminated', reason: mine, why: 'terminated' };
    const [withThread, theirs] = [...forced][0]!;
    return { kind: 'terminated', reason: `terminated: its thread was ended to stop ${withThread}, ${theirs.replace(/^terminated: it /, 'which ')}`, why: 'terminated', withThread };
  }
  const reason = code === null ? `its run threw: ${error?.message ?? 'an error'}` : `thread died (exit code ${code})${error ? `: ${error.message}` : ''}`;
  return { kind: 'crashed', reason, why: error?.code === 'BOARD_UNREACHABLE' ? 'board_unreachable' : 'crashed' };
}

/** Worker-thread entry: wires the core for one teammate. All logic lives in core/agent/teammate.ts. */
import { parentPort, workerData } from 'node:worker_threads';
import { EventCounter } from '../core/agent/event-order.js';
import { Teammate } from '../core/agent/teammate.js';
import type { TeammateEvent } from '../core/agent/teammate-events.js';
import { Wake } from '../core/agent/wake.js';
import { type Board, openBoard } from '../core/board/board.js';
import type { ReplicaRead } from '../core/board/board-types.js';
import { describeCrashError } from '../core/agent/crash-log.js';
import { serializeError } from '../core/errors.js';
import { redact } from '../core/trace/redact.js';
import { attachTelemetry } from '../core/telemetry/attach.js';
import { createModel, type ModelSpec } from '../core/model/factory.js';
import { IdleCollector } from './idle-collector.js';
import { probedElsewhere } from '../core/exec/sandbox.js';
import type { TeammateWorkerInit, ToWorker } from '../core/agent/worker-protocol.js';

const init = workerData as TeammateWorkerInit;
/** How long a thread whose work is done may still be held by a socket left open before it ends itself. */
const THREAD_END_MS = 200;
if (init.containment) probedElsewhere(init.containment);
const port = parentPort!;
const stop = new AbortController();
const wake = new Wake();
const events = new EventCounter();
const collector = new IdleCollector();
let teammate: Teammate | null = null;
/** The model the lead chose last (/model); a teammate not made yet starts on it. */
let latest: ModelSpec = init.model;

/** Reads of the process's board that came while this thread's own was still opening. */
const early: ReplicaRead[] = [];

port.on('message', (message: ToWorker) => {
  if (message.type === 'wake') wake.notify();
  else if (message.type === 'replica') {
    if (board) board.replica?.take(message.read);
    else early.push(message.read);
  }
  else if (message.type === 'stop') stop.abort(new Error(message.reason));
  else if (message.type === 'model') {
    latest = message.spec;
    teammate?.useModel(createModel(message.spec));
  }
});

let board: Board | undefined;
/** A board that is down when the thread starts is waited for (a minute, backing off), not given up on at once. */
async function openWithPatience(address: string, rootDir: string): Promise<Board> {
  const until = Date.now() + 60_000;
  for (let wait = 500; ; wait = Math.min(wait * 2, 8_000)) {
    try {
      return await openBoard(address, rootDir, { poolSize: 3, stamp: events.stamp, ...(init.follow ? { follow: true } : {}), ...(init.settings.maxInboxBytes ? { maxInboxBytes: init.settings.maxInboxBytes } : {}) });
    } catch (error) {
      if ((error as { code?: string }).code !== 'BOARD_UNREACHABLE' || Date.now() + wait > until || stop.signal.aborted) throw error;
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}

try {
  const first = latest;
  const model = await createModel(first);
  board = init.board ? await openWithPatience(init.board, init.rootDir) : undefined;
  // Versions decide, so what came during the open is taken after its own first read, in any order.
  for (const read of early.splice(0)) board?.replica?.take(read);
  teammate = new Teammate({
    name: init.name,
    role: init.role,
    rootDir: init.rootDir,
    prompt: init.prompt,
    model,
    wake,
    signal: stop.signal,
    settings: init.settings,
    emit: (event: TeammateEvent) => {
      port.postMessage(event);
      events.count();
      if (event.type === 'status') collector.status(event.status);
    },
    stamp: events.stamp,
    ...(init.startedAt ? { startedAt: new Date(init.startedAt) } : {}),
    ...(board ? { board } : {}),
  });
  // Changed while the first model was being made.
  if (latest !== first) teammate.useModel(createModel(latest));
  // Its own spans, when an OTLP endpoint is set (every thread exports what it did).
  const detach = await attachTelemetry(teammate.events, (error) => port.postMessage({ type: 'error', name: init.name, error: { code: 'TELEMETRY', message: error.message } }));
  try {
    await teammate.run();
  } finally {
    await detach();
  }
} catch (error) {
  // The stack travels too: the host writes it to the crash log.
  port.postMessage({ type: 'error', name: init.name, error: { ...serializeError(error), stack: redact(describeCrashError(error)) } });
  process.exitCode = 1;
} finally {
  collector.close();
  await board?.close();
}
port.close();
// Done: a socket something left open (an export to a trace collector that never answered, reported
// above) must not hold the thread until the lead's grace ends it by force. With nothing else pending
// the thread has ended before this unref'd timer could fire.
setTimeout(() => process.exit(), THREAD_END_MS).unref();

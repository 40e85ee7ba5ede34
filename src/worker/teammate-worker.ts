/**
 * Worker-thread entry: wires the core for the thread's teammates, one or several of one role on one
 * board. All logic lives in core/agent/teammate.ts.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { EventCounter } from '../core/agent/event-order.js';
import { Teammate } from '../core/agent/teammate.js';
import type { TeammateEvent } from '../core/agent/teammate-events.js';
import { Wake } from '../core/agent/wake.js';
import { type Board, fileBoard, openBoard } from '../core/board/board.js';
import type { ReplicaRead } from '../core/board/board-types.js';
import { describeCrashError } from '../core/agent/crash-log.js';
import { DEFAULT_TEAMMATE_SETTINGS } from '../core/agent/settings.js';
import { serializeError } from '../core/errors.js';
import { redact } from '../core/trace/redact.js';
import { attachTelemetry } from '../core/telemetry/attach.js';
import { createModel, type ModelSpec } from '../core/model/factory.js';
import { IdleCollector } from './idle-collector.js';
import { probedElsewhere } from '../core/exec/sandbox.js';
import type { FromWorker, TeammateSeat, TeammateWorkerInit, ToWorker } from '../core/agent/worker-protocol.js';

const init = workerData as TeammateWorkerInit;
/**
 * Database connections the thread's board keeps for each teammate it runs. A teammate may hold one
 * (the pipeline's lock) while it asks for another (the successor's post), so a pool no larger than
 * its teammates can be held whole by teammates each waiting for a second, until the pool's wait
 * gives up (tests/bench/scale-short-pg.test.ts).
 */
const POOL_PER_TEAMMATE = 3;
/** How long a thread whose work is done may still be held by a socket left open before it ends itself. */
const THREAD_END_MS = 200;
if (init.containment) probedElsewhere(init.containment);
const port = parentPort!;
const events = new EventCounter();
const collector = new IdleCollector();
const post = (message: FromWorker | TeammateEvent) => {
  port.postMessage(message);
  events.count();
};

/** A teammate of this thread: its own wake-ups, its own stop, its model. */
interface Seat {
  spec: TeammateSeat;
  wake: Wake;
  stop: AbortController;
  teammate: Teammate | null;
  /** The model the lead chose last (/model); a teammate not made yet starts on it. */
  latest: ModelSpec;
}
const seats = new Map<string, Seat>(init.seats.map((spec) => [spec.name, { spec, wake: new Wake(), stop: new AbortController(), teammate: null, latest: spec.model }]));
/** The seats a message is for: the one it names, or all of them. */
const addressed = (name: string | undefined) => (name === undefined ? [...seats.values()] : [seats.get(name)].filter((seat) => seat !== undefined));

/** Reads of the process's board that came while this thread's own was still opening. */
const early: ReplicaRead[] = [];

port.on('message', (message: ToWorker) => {
  if (message.type === 'wake') for (const seat of addressed(message.name)) seat.wake.notify();
  else if (message.type === 'replica') {
    if (board) board.replica?.take(message.read);
    else early.push(message.read);
  } else if (message.type === 'stop') for (const seat of addressed(message.name)) seat.stop.abort(new Error(message.reason));
  else if (message.type === 'model') {
    for (const seat of seats.values()) {
      seat.latest = message.spec;
      seat.teammate?.useModel(createModel(message.spec));
    }
  }
});

let board: Board | undefined;
/** A board that is down when the thread starts is waited for (a minute, backing off), not given up on at once. */
async function openWithPatience(address: string, rootDir: string): Promise<Board> {
  const until = Date.now() + 60_000;
  const stopped = () => [...seats.values()].every((seat) => seat.stop.signal.aborted);
  for (let wait = 500; ; wait = Math.min(wait * 2, 8_000)) {
    try {
      return await openBoard(address, rootDir, { poolSize: POOL_PER_TEAMMATE * seats.size, stamp: events.stamp, ...(init.follow ? { follow: true } : {}), ...(init.settings.maxInboxBytes ? { maxInboxBytes: init.settings.maxInboxBytes } : {}) });
    } catch (error) {
      if ((error as { code?: string }).code !== 'BOARD_UNREACHABLE' || Date.now() + wait > until || stopped()) throw error;
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}

/** The thread's one board: the database named, or the file board in rootDir. Its teammates share it (one index, one log sink). */
async function openThreadBoard(): Promise<Board> {
  if (init.board) return openWithPatience(init.board, init.rootDir);
  const settings = { ...DEFAULT_TEAMMATE_SETTINGS, ...init.settings };
  return fileBoard(init.rootDir, { leaseMs: settings.leaseMs, maxInboxBytes: settings.maxInboxBytes, stamp: events.stamp });
}

/** Teammates of the thread whose run has not returned. */
let running = seats.size;

/**
 * Makes the seat's teammate and runs it. The host hears `gone` once it holds nothing more while others
 * run on; the last one ends with the thread, after everything the thread still has to say.
 */
async function runSeat(seat: Seat, opened: Board): Promise<void> {
  const first = seat.latest;
  const model = await createModel(first);
  const { name, prompt, startedAt } = seat.spec;
  const teammate = new Teammate({
    name,
    role: init.role,
    rootDir: init.rootDir,
    prompt,
    model,
    wake: seat.wake,
    signal: seat.stop.signal,
    settings: init.settings,
    emit: (event: TeammateEvent) => {
      post(event);
      if (event.type === 'status') collector.status(event.status, name);
    },
    stamp: events.stamp,
    ...(startedAt ? { startedAt: new Date(startedAt) } : {}),
    board: opened,
  });
  seat.teammate = teammate;
  // Changed while the first model was being made.
  if (seat.latest !== first) teammate.useModel(createModel(seat.latest));
  await teammate.run();
  collector.leave(name);
  if (--running > 0) post({ type: 'gone', name });
}

let crashed: { name: string; error: unknown } | null = null;
try {
  board = await openThreadBoard();
  // Versions decide, so what came during the open is taken after its own first read, in any order.
  for (const read of early.splice(0)) board.replica?.take(read);
  // Its own spans, when an OTLP endpoint is set (every thread exports what it did).
  const detach = await attachTelemetry(board, (error) => post({ type: 'error', name: init.seats[0]!.name, error: { code: 'TELEMETRY', message: error.message } }));
  const opened = board;
  try {
    // A teammate whose run throws takes its thread down: the others are stopped (their tasks handed
    // back as they leave), and the host buries the one that threw as crashed.
    await Promise.all(
      [...seats.values()].map((seat) =>
        runSeat(seat, opened).catch((error: unknown) => {
          crashed ??= { name: seat.spec.name, error };
          for (const other of seats.values()) other.stop.abort(new Error(`${seat.spec.name} crashed in this thread`));
        }),
      ),
    );
  } finally {
    await detach();
  }
} catch (error) {
  crashed ??= { name: init.seats[0]!.name, error };
} finally {
  collector.close();
  await board?.close();
}
if (crashed) {
  // The stack travels too: the host writes it to the crash log.
  const { name, error } = crashed;
  post({ type: 'error', name, error: { ...serializeError(error), stack: redact(describeCrashError(error)) } });
  process.exitCode = 1;
}
port.close();
// Done: a socket something left open (an export to a trace collector that never answered, reported
// above) must not hold the thread until the lead's grace ends it by force. With nothing else pending
// the thread has ended before this unref'd timer could fire.
setTimeout(() => process.exit(), THREAD_END_MS).unref();

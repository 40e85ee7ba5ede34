/**
 * Worker-thread entry: wires the core for the thread's teammates, one or several of one role on one
 * board. All logic lives in core/agent/teammate.ts.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { EventCounter } from '../core/agent/event-order.js';
import { Teammate } from '../core/agent/teammate.js';
import type { TeammateEvent } from '../core/agent/teammate-events.js';
import { MailHint } from '../core/agent/teammate-inbox.js';
import { Wake } from '../core/agent/wake.js';
import { type Board, fileBoard, openBoard, type OpenBoardOptions } from '../core/board/board.js';
import type { ReplicaRead } from '../core/board/board-types.js';
import { describeCrashError } from '../core/agent/crash-log.js';
import { serializeError } from '../core/errors.js';
import { redact } from '../core/trace/redact.js';
import { attachTelemetry } from '../core/telemetry/attach.js';
import { createModel, type ModelSpec } from '../core/model/factory.js';
import { IdleCollector } from './idle-collector.js';
import { RehearsalTimer, rehearsal } from '../core/agent/rehearsal.js';
import { probedElsewhere } from '../core/exec/sandbox.js';
import type { FromWorker, TeammateSeat, TeammateWorkerInit, ToWorker } from '../core/agent/worker-protocol.js';

const init = workerData as TeammateWorkerInit;
/**
 * Database connections the thread's board keeps for each teammate it runs. A teammate may hold one
 * (a lock: the merge queue's, a pipeline's where a post goes the locked way) while it asks for
 * another, so a pool no larger than its teammates can be held whole by teammates each waiting for a
 * second, until the pool's wait gives up (tests/bench/scale-short-pg.test.ts).
 */
const POOL_PER_TEAMMATE = 3;
/**
 * Connections a thread makes ahead, while its teammates are idle: two a teammate (its statement, and a
 * status or a log append beside it), at most this many, so that a large team does not take a
 * server's connections (100 by default) before its work needs them; more are made as needed.
 */
const WARM_CONNECTIONS = 8;
/** How long a thread whose work is done may still be held by a socket left open before it ends itself. */
const THREAD_END_MS = 200;
if (init.containment) probedElsewhere(init.containment);
const port = parentPort!;
const events = new EventCounter();
const collector = new IdleCollector();
/** When the thread rehearses the board's code (rehearsal.ts): a file board's thread, once its teammates sit idle. */
const rehearsing = init.board ? null : new RehearsalTimer(init.seats[0]!.name, init.role);
const post = (message: FromWorker | TeammateEvent) => {
  port.postMessage(message);
  events.count();
};

/** A teammate of this thread: its own wake-ups, its own stop, its model. */
interface Seat {
  spec: TeammateSeat;
  wake: Wake;
  /** Told of its messages by the host's wakes: its inbox is read only then (MailHint). */
  mail: MailHint;
  stop: AbortController;
  teammate: Teammate | null;
  /** The model the lead chose last (/model); a teammate not made yet starts on it. */
  latest: ModelSpec;
}
/** Teammates of the thread whose run has not returned. */
const seats = new Map<string, Seat>(init.seats.map((spec) => [spec.name, { spec, wake: new Wake(), mail: new MailHint(), stop: new AbortController(), teammate: null, latest: spec.model }]));
/** The seats a message is for: the one it names, or all of them. */
const addressed = (name: string | undefined) => (name === undefined ? [...seats.values()] : [seats.get(name)].filter((seat) => seat !== undefined));

/** Reads of the process's board that came while this thread's own was still opening. */
const early: ReplicaRead[] = [];

port.on('message', (message: ToWorker) => {
  if (message.type === 'wake') {
    rehearsing?.woke();
    for (const seat of addressed(message.name)) {
      if (message.mail) seat.mail.arrived();
      seat.wake.notify();
    }
  }
  else if (message.type === 'replica') {
    if (board) board.replica?.take(message.read);
    else early.push(message.read);
  } else if (message.type === 'stop') {
    for (const seat of addressed(message.name)) {
      seat.stop.abort(new Error(message.reason));
      // Stopped while the thread's board is still opening (a database away): it leaves at once, and
      // the others wait on for the board, rather than all of them waiting until the host ends the thread.
      if (!board && seats.size > 1) {
        post({ type: 'exit', name: seat.spec.name, reason: 'stopped before it started', why: 'stopped' });
        leave(seat.spec.name);
      }
    }
  } else if (message.type === 'model') {
    for (const seat of seats.values()) {
      seat.latest = message.spec;
      seat.teammate?.useModel(createModel(message.spec));
    }
  }
});

let board: Board | undefined;
/** A board that is down when the thread starts is waited for (a minute, backing off), not given up on at once. */
async function openWithPatience(address: string, rootDir: string, options: OpenBoardOptions): Promise<Board> {
  const until = Date.now() + 60_000;
  const stopped = () => [...seats.values()].every((seat) => seat.stop.signal.aborted);
  for (let wait = 500; ; wait = Math.min(wait * 2, 8_000)) {
    try {
      return await openBoard(address, rootDir, { ...options, poolSize: POOL_PER_TEAMMATE * seats.size, warmConnections: Math.min(2 * seats.size, WARM_CONNECTIONS), ...(init.follow ? { follow: true } : {}) });
    } catch (error) {
      if ((error as { code?: string }).code !== 'BOARD_UNREACHABLE' || Date.now() + wait > until || stopped()) throw error;
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}

/** The thread's one board: the database named, or the file board in rootDir. Its teammates share it (one index, one log sink). */
async function openThreadBoard(): Promise<Board> {
  const { leaseMs, maxInboxBytes } = init.settings;
  const options = { stamp: events.stamp, ...(leaseMs ? { leaseMs } : {}), ...(maxInboxBytes ? { maxInboxBytes } : {}) };
  return init.board ? openWithPatience(init.board, init.rootDir, options) : fileBoard(init.rootDir, options);
}

/** The error of a run that threw, with its stack (the host writes it to the crash log). */
const crashError = (name: string, error: unknown): FromWorker => ({ type: 'error', name, error: { ...serializeError(error), stack: redact(describeCrashError(error)) } });

/** A name for what the thread says outside any one teammate's run: a teammate it still runs. */
const threadName = () => [...seats.keys()][0] ?? init.seats[0]!.name;

/**
 * Makes the seat's teammate and runs it. A teammate that ends while others run on says `gone` (with
 * `crashed` when its run threw: the host buries it, the others work on); the last one ends with the
 * thread, after everything the thread still has to say.
 */
async function runSeat(seat: Seat, opened: Board): Promise<void> {
  const { name, prompt, startedAt } = seat.spec;
  try {
    const first = seat.latest;
    const model = await createModel(first);
    const teammate = new Teammate({
      name,
      role: init.role,
      rootDir: init.rootDir,
      prompt,
      model,
      wake: seat.wake,
      mail: seat.mail,
      signal: seat.stop.signal,
      settings: init.settings,
      emit: (event: TeammateEvent) => {
        post(event);
        if (event.type !== 'status') return;
        collector.status(event.status, name);
        rehearsing?.status(event.status, event.task);
      },
      stamp: events.stamp,
      ...(startedAt ? { startedAt: new Date(startedAt) } : {}),
      board: opened,
    });
    seat.teammate = teammate;
    // Changed while the first model was being made.
    if (seat.latest !== first) teammate.useModel(createModel(seat.latest));
    await teammate.run();
    leave(name);
  } catch (error) {
    if (!leave(name, true)) throw error;
    post(crashError(name, error));
    post({ type: 'gone', name, crashed: true });
  }
}

/** Lets go of a seat whose run has ended; says `gone` unless it was the last. False for the last. */
function leave(name: string, crashed = false): boolean {
  seats.delete(name);
  collector.leave(name);
  if (seats.size === 0) return false;
  if (!crashed) post({ type: 'gone', name });
  return true;
}

let crashed: { name: string; error: unknown } | null = null;
try {
  board = await openThreadBoard();
  // Versions decide, so what came during the open is taken after its own first read, in any order.
  for (const read of early.splice(0)) board.replica?.take(read);
  // Its own spans, when an OTLP endpoint is set (every thread exports what it did).
  const detach = await attachTelemetry(board, (error) => post({ type: 'error', name: threadName(), error: { code: 'TELEMETRY', message: error.message } }));
  const opened = board;
  try {
    await Promise.all([...seats.values()].map((seat) => runSeat(seat, opened).catch((error: unknown) => void (crashed ??= { name: seat.spec.name, error }))));
  } finally {
    await detach();
  }
} catch (error) {
  crashed ??= { name: threadName(), error };
} finally {
  collector.close();
  // A rehearsal under way ends first: a thread ended in the middle of one would leave its scratch board in the temp folder.
  rehearsing?.cancel();
  await Promise.all([board?.close(), rehearsal()]);
}
if (crashed) {
  const { name, error } = crashed;
  post(crashError(name, error));
  process.exitCode = 1;
}
port.close();
// Done: a socket something left open (an export to a trace collector that never answered, reported
// above) must not hold the thread until the lead's grace ends it by force. With nothing else pending
// the thread has ended before this unref'd timer could fire.
setTimeout(() => process.exit(), THREAD_END_MS).unref();

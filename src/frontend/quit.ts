import type { LeadApi } from '../core/lead/lead-api.js';
import type { LeadEvent } from '../core/lead/session-types.js';

export const QUIT_GRACE_MS = 3_000;

/** Quits a session (shutdown protocol, then the core's sweep of orphaned tasks). Returns lines to show. */
export async function quitSession(session: LeadApi, graceMs = QUIT_GRACE_MS): Promise<string[]> {
  const { exits, released } = await session.close(graceMs);
  const lines = exits.map((exit) => `${exit.name}: ${exit.kind === 'left' ? 'shut down' : exit.kind === 'terminated' ? 'stopped' : 'died'} (${exit.reason})`);
  for (const id of released) lines.push(`task #${id} handed back to the board (its owner stopped)`);
  return lines;
}

/** An event a quit's own report tells (`analyst: shut down (…)`): not shown again as it comes in. */
export function toldByQuit(event: LeadEvent): boolean {
  return event.type === 'teammate_exit' && event.exit.kind === 'left';
}

/** Whether this process's terminal closed (onHangup). */
let hungUp = false;

/**
 * After a hang-up at a terminal and its clean shutdown, the process ends by SIGHUP, as a hung-up
 * program does. Ending any other way, Node would restore the modes of a terminal that is gone and
 * abort on the error (an assertion in its ResetStdio). Every listener goes first (libraries keep one
 * to restore the cursor), so the signal's default action ends the process at once. Call last.
 */
export function endHungUp(): void {
  if (!hungUp || ![process.stdin, process.stdout, process.stderr].some((stream) => stream.isTTY)) return;
  process.removeAllListeners('SIGHUP');
  process.kill(process.pid, 'SIGHUP');
}

/**
 * The terminal closed (SIGHUP, as when its window or SSH session goes): `quit` once, as on SIGTERM —
 * the team shut down, tasks handed back, the board released. A write to a terminal that is gone fails
 * (EIO), and may fail before the signal arrives (a frame drawn in between): that is a hang-up too.
 * From then on output errors are dropped, for good, so that no late write crashes the shutdown. A
 * hang-up usually comes twice (from the kernel and again from the shell), so the handler stays until
 * the unsubscribe, which belongs after the shutdown: with no handler, the next SIGHUP would kill the
 * process half-way.
 */
export function onHangup(quit: () => void): () => void {
  const hangUp = () => {
    if (hungUp) return;
    hungUp = true;
    for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);
    quit();
  };
  // Another error (EPIPE: output piped into something that stopped reading) is its other listeners'
  // to handle (run's stops as on Ctrl+C); with none, it is thrown as it would have been. After a
  // hang-up there is always another: the listener that drops every error.
  const onOutputError = (stream: NodeJS.WriteStream) => (error: NodeJS.ErrnoException) => {
    if (error.code === 'EIO') hangUp();
    else if (stream.listenerCount('error') === 1) throw error;
  };
  const onStdout = onOutputError(process.stdout);
  const onStderr = onOutputError(process.stderr);
  process.on('SIGHUP', hangUp);
  process.stdout.on('error', onStdout);
  process.stderr.on('error', onStderr);
  return () => {
    process.off('SIGHUP', hangUp);
    process.stdout.off('error', onStdout);
    process.stderr.off('error', onStderr);
  };
}

/**
 * A signal that comes again within this long is the same stop delivered twice (`timeout` signals the
 * process and then its group; a service manager may do the same), not a person insisting.
 */
export const SAME_STOP_MS = 250;

/**
 * SIGINT and SIGTERM stop the work: the first calls `stop`; the same stop delivered again at once is
 * ignored; a later one ends the process by that signal, as a person pressing Ctrl+C again means.
 * Returns the removal of both.
 */
export function onStopSignals(stop: (signal: NodeJS.Signals) => void): () => void {
  let first = 0;
  const handler = (signal: NodeJS.Signals): void => {
    if (first === 0) {
      first = Date.now();
      stop(signal);
      return;
    }
    if (Date.now() - first < SAME_STOP_MS) return;
    off();
    process.kill(process.pid, signal);
  };
  const off = (): void => {
    process.off('SIGINT', handler);
    process.off('SIGTERM', handler);
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  return off;
}

import type { LeadApi } from '../core/lead/lead-api.js';

export const QUIT_GRACE_MS = 3_000;

/** Quits a session (shutdown protocol, then the core's sweep of orphaned tasks). Returns lines to show. */
export async function quitSession(session: LeadApi, graceMs = QUIT_GRACE_MS): Promise<string[]> {
  const { exits, released } = await session.close(graceMs);
  const lines = exits.map((exit) => `${exit.name}: ${exit.kind === 'left' ? 'shut down' : exit.kind === 'terminated' ? 'stopped' : 'died'} (${exit.reason})`);
  for (const id of released) lines.push(`task #${id} handed back to the board (its owner stopped)`);
  return lines;
}

/**
 * The terminal closed (SIGHUP, as when its window or SSH session goes): `quit` as on SIGTERM — the team
 * shut down, tasks handed back, the board released. A terminal that is gone fails every write (EIO),
 * and a failed write must not crash that shutdown, so from then on output errors are dropped.
 * Returns the unsubscribe.
 */
export function onHangup(quit: () => void): () => void {
  const onHup = () => {
    for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);
    quit();
  };
  process.once('SIGHUP', onHup);
  return () => process.off('SIGHUP', onHup);
}

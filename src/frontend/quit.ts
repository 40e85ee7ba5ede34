import type { LeadApi } from '../core/lead/lead-api.js';

export const QUIT_GRACE_MS = 3_000;

/** Quits a session (shutdown protocol, then the core's sweep of orphaned tasks). Returns lines to show. */
export async function quitSession(session: LeadApi, graceMs = QUIT_GRACE_MS): Promise<string[]> {
  const { exits, released } = await session.close(graceMs);
  const lines = exits.map((exit) => `${exit.name}: ${exit.kind === 'left' ? 'shut down' : exit.kind === 'terminated' ? 'stopped' : 'died'} (${exit.reason})`);
  for (const id of released) lines.push(`task #${id} handed back to the board (its owner stopped)`);
  return lines;
}

import type { LeadSession } from '../../core/lead/session.js';

export const QUIT_GRACE_MS = 3_000;

/**
 * Quits a session: the shutdown protocol for every teammate (bounded), then a sweep so no task
 * stays in_progress under a teammate of this process that is gone. Returns lines to show.
 */
export async function quitSession(session: LeadSession, graceMs = QUIT_GRACE_MS): Promise<string[]> {
  const lines: string[] = [];
  const exits = await session.close(graceMs);
  for (const exit of exits) lines.push(`${exit.name}: ${exit.clean ? 'shut down' : 'stopped'} (${exit.reason})`);
  const ours = new Set(session.mailbox.registry.members().filter((member) => member.pid === process.pid).map((member) => member.name));
  for (const task of session.board.list()) {
    if (task.status === 'in_progress' && task.owner && ours.has(task.owner)) {
      await session.board.reclaimFrom(task.id, task.owner, 'the REPL quit').catch(() => undefined);
      lines.push(`task #${task.id} handed back to the board (its owner ${task.owner} stopped)`);
    }
  }
  return lines;
}

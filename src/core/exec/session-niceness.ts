import fs from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

/** Tries of a change the kernel refused for its rate limit, a tenth of a second apart. */
const TRIES = 5;

/**
 * Sets the niceness of the session `pid` belongs to — its autogroup, which is what Linux's autogroup
 * scheduling shares the CPU between before any process's own niceness counts. For a process started
 * in a session of its own (a detached start: a stdio MCP server, or a run where no launcher can
 * start it); the launcher sets its own the same way (launcher-program.ts). Without CAP_SYS_ADMIN the
 * kernel takes one such change per tenth of a second, machine-wide (EAGAIN): tried again a few
 * times. Best effort: false where there are no autogroups or the change was not taken, and the
 * process's own niceness still holds inside its session.
 */
export async function setSessionNiceness(pid: number, niceness: number): Promise<boolean> {
  for (let tried = 1; ; tried++) {
    try {
      fs.writeFileSync(`/proc/${pid}/autogroup`, String(niceness));
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EAGAIN' || tried >= TRIES) return false;
      await sleep(100);
    }
  }
}

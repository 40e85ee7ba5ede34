import fs from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

/** How long a change the kernel refused for its rate limit is tried again. */
const RETRY_MS = 30_000;

/**
 * Sets the niceness of the session `pid` belongs to — its autogroup, which is what Linux's autogroup
 * scheduling shares the CPU between before any process's own niceness counts. For a process started
 * in a session of its own (a detached start: a stdio MCP server, or a run where no launcher can
 * start it); the launcher sets its own the same way (launcher-program.ts). The first try is made at
 * once. Without CAP_SYS_ADMIN the kernel takes one such change per tenth of a second, machine-wide
 * (EAGAIN): tried again for 30 s, at random moments, while `running` says the process has not
 * ended (so never under a pid that has been given to another process). Best
 * effort: false where there are no autogroups or the change was not taken, and the process's own
 * niceness still holds inside its session.
 */
export async function setSessionNiceness(pid: number, niceness: number, running: () => boolean): Promise<boolean> {
  const until = Date.now() + RETRY_MS;
  for (;;) {
    try {
      fs.writeFileSync(`/proc/${pid}/autogroup`, String(niceness));
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EAGAIN' || Date.now() >= until) return false;
      await sleep(100 + Math.random() * 100, undefined, { ref: false });
      if (!running()) return false;
    }
  }
}

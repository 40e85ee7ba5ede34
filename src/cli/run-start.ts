import { parseWait } from '../core/agent/settings.js';
import type { LeadApi } from '../core/lead/lead-api.js';
import { ConfigError } from '../core/errors.js';
import { waitsFor } from '../frontend/work.js';
import { workerCommands } from './post-command.js';

/** `--timeout`, 10 minutes by default. A bare number is refused: is `--timeout 600` ten minutes or 0.6 s? */
export function runTimeout(value: string | undefined): number {
  if (value === undefined) return 10 * 60_000;
  // One set of examples for each way it can be wrong.
  const examples = '90s, 10m, 1h';
  // `0` takes no unit anywhere (README, Configuration): here it is no time at all, said as such.
  if (/^\s*\d+(\.\d+)?\s*$/.test(value) && Number(value) !== 0) throw new ConfigError(`--timeout: '${value}' needs a unit (examples: ${examples})`);
  const ms = parseWait(value, '--timeout', examples);
  if (ms <= 0) throw new ConfigError(`--timeout: '${value}' is no time at all (examples: ${examples})`);
  return ms;
}

/** How long `run` lets its pipelines sit with nobody to move them (a worker being restarted is back within it) before it stops and leaves them open. */
export const STUCK_GRACE_MS = 15_000;

/**
 * Calls `stop` with why once the run's active pipelines (`active()`) have stayed where nothing moves
 * them for `graceMs`: no teammate of the run, resting or live elsewhere, takes their next task
 * (`busyReason` null), no question waits for the person, and the model has not failed (said on its
 * own). Without it a run whose last worker of a role left waited out its timeout, then cancelled the
 * work. Looked at each second; returns the watch's end.
 */
export function watchStuck(session: Pick<LeadApi, 'busyReason' | 'pendingQuestions' | 'fatalModelError' | 'snapshot'>, active: () => number[], stop: (reason: string) => void, graceMs = STUCK_GRACE_MS): () => void {
  let since: number | null = null;
  const timer = setInterval(() => {
    const open = active();
    if (open.length === 0 || session.pendingQuestions().length > 0 || session.fatalModelError() || session.busyReason() !== null) {
      since = null;
      return;
    }
    since ??= Date.now();
    if (Date.now() - since < graceMs) return;
    clearInterval(timer);
    const waiting = session.snapshot().tasks.filter((task) => task.pipeline !== null && open.includes(task.pipeline) && task.status === 'pending');
    const roles = [...new Set(waiting.flatMap((task) => (task.role ? [task.role] : [])))];
    const what = waiting.map(waitsFor).join(', ');
    const who = roles.length ? workerCommands(roles) : 'a teammate of any role (autoteam worker --role any)';
    const ids = open.map((id) => `#${id}`).join(', ');
    // Nothing pending and nothing moving: its next stage may be in a task file that does not read.
    if (!what) return stop(`pipeline ${ids} has not moved for ${Math.round(graceMs / 1000)} s and has no task waiting: its next stage may be in a task file that does not read (autoteam tasks names it)`);
    stop(`nobody is left to work pipeline ${ids} (${what}) for ${Math.round(graceMs / 1000)} s: ${who} on this board goes on with it`);
  }, Math.min(1_000, graceMs));
  timer.unref();
  return () => clearInterval(timer);
}

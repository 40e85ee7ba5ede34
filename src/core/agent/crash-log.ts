import fs from 'node:fs';
import path from 'node:path';
import { redact } from '../trace/redact.js';
import { within } from '../within.js';

/** What is known of a teammate that died: enough to find the bug without rerunning. */
export interface CrashReport {
  name: string;
  role: string;
  /** How it died, as the screen says it. */
  reason: string;
  /** The error with its stack, when there was one. */
  error?: string;
  /** Where: a worker thread of pid N, or the `autoteam worker` process N. */
  where: string;
  /** Tasks handed back to the board because of it. */
  released?: readonly number[];
  /** The teammate's last events, oldest first. */
  recent?: readonly string[];
}

/**
 * Writes `.team/crash/<name>-<time>.log` under `rootDir` (redacted like every file autoteam writes)
 * and returns its path relative to `rootDir`, or null when it could not be written (a full disk must
 * not turn one failure into two).
 */
export function writeCrashLog(rootDir: string, report: CrashReport, now = new Date()): string | null {
  const stamp = now.toISOString().replace(/[:.]/g, '-');
  const relative = path.join('.team', 'crash', `${report.name}-${stamp}.log`);
  const lines = [
    `${report.name} (${report.role}) died at ${now.toISOString()} — ${report.where}`,
    `reason: ${report.reason}`,
    ...(report.released?.length ? [`handed back: ${report.released.map((id) => `#${id}`).join(', ')}`] : []),
    '',
    report.error ? `error:\n${report.error}` : 'error: none was reported (the thread or process ended without one)',
    ...(report.recent?.length ? ['', 'last events:', ...report.recent.map((line) => `  ${line}`)] : []),
    '',
  ];
  try {
    fs.mkdirSync(path.join(rootDir, '.team', 'crash'), { recursive: true });
    fs.writeFileSync(path.join(rootDir, relative), redact(lines.join('\n')));
    return relative;
  } catch {
    return null;
  }
}

/** An error as the crash log shows it: the stack when there is one (it starts with the message). */
export function describeCrashError(error: unknown): string {
  if (error instanceof Error) return error.stack ?? `${error.name}: ${error.message}`;
  return String(error);
}

export interface ProcessGuardOptions {
  rootDir: string;
  name: string;
  role: string;
  /** Hands back what the teammate held (bounded by the guard); returns the task ids. */
  handBack?: () => Promise<number[]>;
  /** The teammate's last events, for the log. */
  recent?: () => readonly string[];
  /** Where the one line goes (default: stderr). */
  say?: (line: string) => void;
}

/**
 * A teammate that runs in the foreground of a process (`autoteam worker`): an error nothing caught
 * is written to its crash log with the stack, its task is handed back, one line names the log, and
 * the process exits 1. `crashed(error)` does the same for an error the caller caught. Returns the
 * guard; `dispose()` removes its handlers.
 */
export function guardProcess(options: ProcessGuardOptions): { crashed(error: unknown): Promise<never>; dispose(): void } {
  const say = options.say ?? ((line: string) => process.stderr.write(`${line}\n`));
  let crashing = false;
  const crashed = async (error: unknown): Promise<never> => {
    if (!crashing) {
      crashing = true;
      const released = await within(options.handBack?.().catch(() => []) ?? Promise.resolve([]), 2_000, []);
      const message = error instanceof Error ? error.message : String(error);
      const reason = `the process died: ${message}`;
      const log = writeCrashLog(options.rootDir, {
        name: options.name,
        role: options.role,
        reason,
        where: `the autoteam worker process ${process.pid}`,
        error: describeCrashError(error),
        released,
        recent: options.recent?.() ?? [],
      });
      const handed = released.length ? `; handed back ${released.map((id) => `#${id}`).join(', ')}` : '';
      say(redact(`[${options.name}] died: ${message}${handed}${log ? ` — details in ${log}` : ''}`));
    }
    process.exit(1);
  };
  const onUncaught = (error: unknown) => void crashed(error);
  process.on('uncaughtException', onUncaught);
  process.on('unhandledRejection', onUncaught);
  return {
    crashed,
    dispose() {
      process.off('uncaughtException', onUncaught);
      process.off('unhandledRejection', onUncaught);
    },
  };
}

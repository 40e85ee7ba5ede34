import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import { pidAlive } from '../board/liveness.js';
import { childEnv } from './env.js';
import { pathWithPython, pythonProgram } from './python.js';
import { pidsCgroups, type RunCgroup, sweepCgroups } from './pids-cgroup.js';
import type { LimitHit, Sandbox } from './sandbox.js';
import { launchProcess } from './launcher.js';
import { formatLimit } from '../sizes.js';
import { redact } from '../trace/redact.js';

export interface RunProcessOptions {
  cwd: string;
  timeoutMs: number;
  /** Characters kept of stdout and of stderr each; the middle of a longer output is cut. */
  maxOutputChars: number;
  /** Written to stdin; without it stdin is empty, so a prompt for input sees end-of-file. */
  input?: string;
  signal?: AbortSignal;
  /** Extra variables on top of the allow-listed environment. */
  env?: Record<string, string>;
  /** Run inside this task's sandbox (bubblewrap where there is one, limits, a private HOME). */
  sandbox?: Sandbox;
}

export interface ProcessResult {
  /** null when the process was killed by a signal; 127 when the program could not be started. */
  exitCode: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  durationMs: number;
  /** Killed because the caller's AbortSignal fired. */
  canceled?: boolean;
  /** The signal that ended the process, if any. */
  signal?: string;
  /** Why the process could not run at all (missing program, missing directory). */
  error?: string;
  /** A resource limit of the sandbox that ended or failed the process. */
  limit?: LimitHit;
  /** Stopped because an output stream passed this many bytes (what was kept is cut as any long output). */
  overflowBytes?: number;
}

/** What the first runProcess of a thread needs (which python3 the tools and the launcher start), ahead of it. */
export async function warmProcesses(): Promise<void> {
  await pythonProgram();
}

/**
 * Keeps the head and the tail of `text` (errors tend to be at the end) within `max` characters.
 * Secrets are redacted before the cut: one cut in two halves would no longer be found whole.
 */
export function capOutput(text: string, max: number): string {
  if (text.length <= max) return text;
  text = redact(text);
  if (text.length <= max) return text;
  const head = Math.ceil(max * 0.6);
  const tail = max - head;
  const cut = text.length - head - tail;
  return `${text.slice(0, head)}\n…[${cut} more characters cut]…\n${tail > 0 ? text.slice(-tail) : ''}`;
}

function failed(error: string, started: number): ProcessResult {
  return { exitCode: 127, stdout: '', stderr: error, timedOut: false, durationMs: Math.round(performance.now() - started), error };
}

/** The variable that marks every process of one run, so the sweep can find those that left the group. */
const MARKER = 'AUTOTEAM_RUN';
/** The pid of the autoteam process that started a run: when it is gone, the run is an orphan. */
const OWNER = 'AUTOTEAM_OWNER';

/**
 * The variables that mark a process tree as one run of this autoteam process: `sweep(marker)` finds
 * what left its group, and the lead's `sweepOrphans` kills it once this process is gone.
 */
export function runMarkers(marker: string): Record<string, string> {
  return { [MARKER]: marker, [OWNER]: String(process.pid) };
}

/** SIGKILLs every other process whose environment (Linux: /proc/<pid>/environ) `doomed` picks. */
function killWhere(doomed: (environ: Buffer) => boolean): number {
  if (process.platform !== 'linux') return 0;
  let killed = 0;
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    let environ: Buffer;
    try {
      environ = fs.readFileSync(`/proc/${entry}/environ`);
    } catch {
      continue;
    }
    if (!doomed(environ)) continue;
    try {
      process.kill(Number(entry), 'SIGKILL');
      killed++;
    } catch {
      // gone already
    }
  }
  return killed;
}

/**
 * Kills every process whose environment carries `marker`. This finds what left the process group
 * (`setsid`, a double fork) unless it also cleared its environment; under bubblewrap the PID
 * namespace already took them all.
 */
export function sweep(marker: string): number {
  const needle = Buffer.from(`${MARKER}=${marker}\0`);
  return killWhere((environ) => environ.includes(needle));
}

/**
 * Kills every process of a run whose autoteam process is gone: a teammate killed outright before
 * bubblewrap armed --die-with-parent, or without bubblewrap at all; and removes the pids cgroups
 * such a process left (with whatever still runs in them). Run by the lead every few seconds.
 */
export function sweepOrphans(): number {
  const owner = Buffer.from(`${OWNER}=`);
  const pids = pidsCgroups();
  if (pids.kind === 'cgroup') sweepCgroups(pids.cgroups);
  return killWhere((environ) => {
    const at = environ.indexOf(owner);
    if (at < 0) return false;
    const end = environ.indexOf(0, at);
    const pid = Number(environ.subarray(at + owner.length, end < 0 ? undefined : end).toString());
    return Number.isInteger(pid) && pid > 0 && !pidAlive(pid);
  });
}

/**
 * Runs `command args` without a shell, in its own process group, with an allow-listed environment
 * (inside `options.sandbox` when given). On timeout or abort the whole tree gets SIGKILL, so
 * `bash -c 'sleep 30 & wait'` cannot outlive the call; the tree is also killed once the main process
 * exits, because a leftover background child would hold the output pipes open and keep this call
 * waiting. "The tree" is the process group plus a sweep for the run's marker (a `setsid` child leaves
 * the group), under bubblewrap the whole PID namespace, and with a sandbox on a host with a pids
 * cgroup everything in the run's cgroup (which is removed before this returns).
 */
export async function runProcess(command: string, args: readonly string[], options: RunProcessOptions): Promise<ProcessResult> {
  const started = performance.now();
  // `python3` is whatever interpreter PATH picks, found once, without its shim's cost at every start.
  const python = await pythonProgram();
  if (command === 'python3') command = python;
  if (options.signal?.aborted) return { ...failed('canceled before start', started), exitCode: null, canceled: true };
  if (!fs.existsSync(options.cwd)) return failed(`working directory '${options.cwd}' does not exist`, started);

  const marker = randomUUID();
  const sandbox = options.sandbox;
  const env = { ...(sandbox ? sandbox.env(options.env) : { ...childEnv(), ...options.env }), ...runMarkers(marker) };
  if (env.PATH !== undefined) env.PATH = pathWithPython(env.PATH, python);
  let cgroup: RunCgroup | null = null;
  try {
    cgroup = (await sandbox?.openCgroup()) ?? null;
  } catch (error) {
    return failed(`cannot make the pids cgroup that bounds the process count: ${(error as Error).message}`, started);
  }
  const absent = sandbox?.absentGuarded() ?? [];
  let result: ProcessResult | undefined;
  try {
    result = await runIn(command, args, options, { marker, env, cgroup, started });
  } finally {
    // Even a run that failed in the runtime leaves none of autoteam's trusted files behind.
    const moved = sandbox?.moveAsideCreated(absent) ?? [];
    if (result && moved.length) result = { ...result, stderr: [result.stderr, ...moved].filter(Boolean).join('\n') };
    // Nothing of the run outlives it, and neither does its cgroup.
    await cgroup?.remove();
  }
  return result;
}

async function runIn(
  command: string,
  args: readonly string[],
  options: RunProcessOptions,
  run: { marker: string; env: Record<string, string>; cgroup: RunCgroup | null; started: number },
): Promise<ProcessResult> {
  const { marker, env, cgroup, started } = run;
  const sandbox = options.sandbox;
  // Started through a launcher or detached: with no controlling terminal either way.
  const wrapped = sandbox ? sandbox.command(command, args, cgroup, { detached: true }) : { command, args: [...args], niceness: undefined };
  // Bounded memory for a runaway writer: the process is stopped when a stream passes this.
  const maxBuffer = Math.max(options.maxOutputChars * 4, 1 << 20);
  const child = await launchProcess({
    argv: [wrapped.command, ...wrapped.args],
    cwd: options.cwd,
    env,
    maxBuffer,
    // The agents' code: through the launcher whose session runs at the code's niceness.
    ...(wrapped.niceness === undefined ? {} : { niceness: wrapped.niceness }),
    ...(options.input === undefined ? {} : { input: options.input }),
  });

  // Under bubblewrap the run is a PID namespace, which the kernel empties when its first process
  // ends: no process can leave it, so there is nothing for the sweep of /proc to find.
  const namespaced = sandbox?.kind === 'bwrap';
  const killGroup = (): void => {
    child.killGroup();
    if (!namespaced) sweep(marker);
    cgroup?.killAll();
  };
  let timedOut = false;
  let canceled = false;
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup();
  }, options.timeoutMs);
  const onAbort = (): void => {
    canceled = true;
    killGroup();
  };
  // The launcher is asked before this point, so an abort that came while it started is seen here.
  if (options.signal?.aborted) onAbort();
  else options.signal?.addEventListener('abort', onAbort, { once: true });
  // A child forking at the moment of the sweep escapes it and keeps the pipes open: sweep again until they close.
  let reaper: NodeJS.Timeout | undefined;
  child.onExit(() => {
    killGroup();
    reaper = setInterval(killGroup, 100);
  });

  try {
    const result = await child.outcome;
    const durationMs = Math.round(performance.now() - started);
    if (result.startError?.code === 'ENOENT') {
      return { ...failed(`program '${command}' was not found: it is not installed or not on PATH`, started), durationMs };
    }
    if (result.startError && !timedOut && !canceled) {
      return { ...failed(`could not start '${command}': ${result.startError.message}`, started), durationMs };
    }
    let stderr = capOutput(result.stderr, options.maxOutputChars);
    if (result.overflow) stderr += `${stderr ? '\n' : ''}[output passed the limit; the process was stopped]`;
    if (result.lost) stderr += `${stderr ? '\n' : ''}[the process launcher was killed under this run, which was stopped with it: run it again]`;
    const outcome: ProcessResult = {
      exitCode: result.exitCode,
      stdout: capOutput(result.stdout, options.maxOutputChars),
      stderr,
      timedOut,
      durationMs,
      ...(canceled ? { canceled } : {}),
      ...(result.signal ? { signal: result.signal } : {}),
      ...(result.overflow ? { overflowBytes: maxBuffer } : {}),
    };
    // A stop for its output is said as that: the 1 MB it wrote is no sign of a limit of the sandbox.
    const limit = !timedOut && !canceled && !result.overflow ? sandbox?.limitHit({ ...outcome, pidsMaxHit: cgroup?.maxHit() ?? false }) : null;
    return limit ? { ...outcome, limit } : outcome;
  } finally {
    clearTimeout(timer);
    clearInterval(reaper);
    options.signal?.removeEventListener('abort', onAbort);
  }
}

/** Compact text for a model: status line, then stdout and stderr sections (omitted when empty). */
export function formatProcessResult(result: ProcessResult, timeoutMs?: number): string {
  let status: string;
  if (result.error) status = `error: ${result.error}`;
  else if (result.limit) status = `stopped: ${result.limit.text} (exit ${result.exitCode ?? result.signal ?? 'none'})`;
  else if (result.timedOut) status = `timed out after ${timeoutMs ?? result.durationMs} ms; the process was killed`;
  else if (result.canceled) status = 'canceled; the process was killed';
  else if (result.overflowBytes) status = `stopped: its output passed ${formatLimit(result.overflowBytes)}`;
  else if (result.exitCode === null) status = `killed by ${result.signal ?? 'a signal'}`;
  else status = `exit ${result.exitCode}`;
  const parts = [`${status} (${result.durationMs} ms)`];
  if (result.stdout) parts.push(`stdout:\n${result.stdout}`);
  if (result.stderr && !result.error) parts.push(`stderr:\n${result.stderr}`);
  if (!result.stdout && !result.stderr) parts.push('(no output)');
  return parts.join('\n');
}

/** A short status for board history: `exit 0`, `timed out`, `not run: …`. */
export function describeExit(result: ProcessResult): string {
  if (result.error) return `not run: ${result.error}`;
  if (result.timedOut) return 'timed out';
  if (result.canceled) return 'canceled';
  if (result.limit) return `${result.limit.limit} limit hit`;
  if (result.overflowBytes) return `stopped: output passed ${formatLimit(result.overflowBytes)}`;
  return result.exitCode === null ? `killed by ${result.signal ?? 'signal'}` : `exit ${result.exitCode}`;
}

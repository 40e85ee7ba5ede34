import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';

export interface HookProcessOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Written to the hook's stdin, which is then closed. */
  input: string;
  timeoutMs: number;
  /** Bytes kept of stdout and of stderr each; the middle of a longer output is cut. */
  maxOutputBytes: number;
  signal?: AbortSignal;
}

export interface HookProcessResult {
  /** null when the hook did not exit by itself (killed, or never started). */
  exitCode: number | null;
  /** The signal that ended the shell, if one did. */
  exitSignal: string | null;
  stdout: string;
  stderr: string;
  /** The hook was still running at its timeout; its process group was killed. */
  timedOut: boolean;
  canceled: boolean;
  /** Why the hook could not be started at all. */
  error?: string;
  durationMs: number;
}

/**
 * Keeps the head and the tail of a stream (a test run's verdict is at its end) within `max` bytes,
 * reading everything: a hook that writes more is not stopped for it, only cut.
 */
class CappedOutput {
  private readonly head: Buffer[] = [];
  private headBytes = 0;
  private tail = Buffer.alloc(0);
  private total = 0;
  private readonly headMax: number;
  private readonly tailMax: number;

  constructor(private readonly max: number) {
    this.headMax = Math.ceil(max * 0.6);
    this.tailMax = max - this.headMax;
  }

  push(chunk: Buffer): void {
    this.total += chunk.length;
    let rest = chunk;
    if (this.headBytes < this.headMax) {
      const taken = rest.subarray(0, this.headMax - this.headBytes);
      this.head.push(Buffer.from(taken));
      this.headBytes += taken.length;
      rest = rest.subarray(taken.length);
    }
    if (rest.length === 0 || this.tailMax === 0) return;
    const joined = Buffer.concat([this.tail, rest]);
    this.tail = Buffer.from(joined.subarray(Math.max(0, joined.length - this.tailMax)));
  }

  text(): string {
    const head = Buffer.concat(this.head).toString('utf8');
    if (this.total <= this.max) return head + this.tail.toString('utf8');
    return `${head}\n…[${this.total - this.max} more bytes cut]…\n${this.tail.toString('utf8')}`;
  }
}

/**
 * The process groups of the hooks this thread runs now. A hook is a group of its own (so its
 * timeout kills all it started), which the runtime's end would not reach: whatever is left of them
 * when the thread or process exits is killed then (a `run` ended by Ctrl+C with the lead's hook
 * running). A worker ended by force runs no exit listener; its shutdown's abort killed them before.
 */
const running = new Set<number>();
let reaperArmed = false;

function track(pid: number): void {
  running.add(pid);
  if (reaperArmed) return;
  reaperArmed = true;
  process.on('exit', () => {
    for (const group of running) killGroup(group);
  });
}

function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // The group is gone already.
  }
}

/** How long output is still taken after the shell exits with nothing more coming (and at most EXIT_WAIT_MS in all): what it wrote is in the pipes by then. */
export const EXIT_GRACE_MS = 200;
const EXIT_WAIT_MS = 1_000;

/**
 * Runs `command` with `/bin/sh -c` in its own process group, with the given environment, the
 * input on stdin, and a timeout. At the timeout (or on abort) the whole group gets SIGKILL, so
 * `sleep 600 & wait` cannot outlive it, and the pipes are let go, so a process that left the group
 * and still holds them cannot keep the caller waiting either. A background job of a hook that
 * finished in time is left alone (a hook may start a notifier on purpose), and does not hold the
 * answer: once nothing came for EXIT_GRACE_MS after the shell exited (at most EXIT_WAIT_MS), the
 * answer is the shell's; the pipes are still read, and what the job writes later dropped, so a
 * write of its does not meet a closed pipe (SIGPIPE would end it).
 */
export function runHookProcess(command: string, options: HookProcessOptions): Promise<HookProcessResult> {
  const started = performance.now();
  const elapsed = (): number => Math.round(performance.now() - started);
  const base = { exitCode: null, exitSignal: null, stdout: '', stderr: '', timedOut: false, canceled: false };
  if (options.signal?.aborted) return Promise.resolve({ ...base, canceled: true, durationMs: 0 });

  return new Promise((resolve) => {
    const child = spawn('/bin/sh', ['-c', command], { cwd: options.cwd, env: options.env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
    if (child.pid !== undefined) track(child.pid);
    const stdout = new CappedOutput(options.maxOutputBytes);
    const stderr = new CappedOutput(options.maxOutputBytes);
    let exited = false;
    let exitCode: number | null = null;
    let exitSignal: string | null = null;
    let timedOut = false;
    let canceled = false;
    let settled = false;

    let grace: NodeJS.Timeout | undefined;
    const finish = (error?: string): void => {
      if (settled) return;
      settled = true;
      if (child.pid !== undefined) running.delete(child.pid);
      clearTimeout(timer);
      clearTimeout(grace);
      options.signal?.removeEventListener('abort', onAbort);
      resolve({ exitCode, exitSignal, stdout: stdout.text(), stderr: stderr.text(), timedOut, canceled, ...(error ? { error } : {}), durationMs: elapsed() });
    };
    const stop = (why: 'timeout' | 'abort'): void => {
      if (!exited) {
        if (why === 'timeout') timedOut = true;
        else canceled = true;
      }
      if (child.pid !== undefined) killGroup(child.pid);
      child.stdout.destroy();
      child.stderr.destroy();
    };
    const onAbort = (): void => stop('abort');
    const timer = setTimeout(() => stop('timeout'), options.timeoutMs);
    options.signal?.addEventListener('abort', onAbort, { once: true });

    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    // A hook that never reads its input closes the pipe under us: that is its right.
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.input);
    child.on('error', (error) => {
      // Only a failed start ends here; once running, the process reports through exit and close.
      if (child.pid === undefined) finish(`could not start /bin/sh in ${options.cwd}: ${error.message}`);
    });
    // A job it left in the background may hold the pipes open: the shell's answer does not wait for it.
    // Answered once nothing came for EXIT_GRACE_MS after the exit (at most EXIT_WAIT_MS), and only
    // after one more read of the pipes (setImmediate follows the event loop's poll): a loop held up
    // past the grace still reads what the shell wrote. The pipes stay open, read and dropped.
    let exitedAt = 0;
    const answer = (): void => {
      for (const pipe of [child.stdout, child.stderr]) {
        pipe.removeAllListeners('data');
        pipe.resume();
        (pipe as { unref?: () => void }).unref?.();
      }
      finish();
    };
    const letGo = (): void => {
      clearTimeout(grace);
      grace = setTimeout(() => setImmediate(answer), Math.max(0, Math.min(EXIT_GRACE_MS, exitedAt + EXIT_WAIT_MS - performance.now())));
    };
    child.stdout.on('data', () => exited && letGo());
    child.stderr.on('data', () => exited && letGo());
    child.on('exit', (code, signal) => {
      exited = true;
      exitedAt = performance.now();
      exitCode = code;
      exitSignal = signal;
      letGo();
    });
    child.on('close', () => finish());
  });
}

import { type ChildProcessByStdio, spawn } from 'node:child_process';
import type { Socket } from 'node:net';
import type { Readable, Writable } from 'node:stream';
import { childEnv } from './env.js';
import { LAUNCHER_MARK, LAUNCHER_PROGRAM } from './launcher-program.js';
import { pythonProgram } from './python.js';
import { setSessionNiceness } from './session-niceness.js';

export interface LaunchRequest {
  argv: readonly string[];
  cwd: string;
  env: Record<string, string>;
  /** Written to stdin; without it stdin is /dev/null. */
  input?: string;
  /** Bytes kept of stdout and of stderr each; a stream that passes it stops the process group. */
  maxBuffer: number;
  /**
   * The niceness of the session it runs in (0 by default): the agents' code runs at CODE_NICENESS,
   * through a launcher of its own whose session has that niceness (launcher-program.ts).
   */
  niceness?: number;
}

/** How a launched process ended, once it has exited and both its output pipes have closed. */
export interface LaunchOutcome {
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  /** An output stream passed `maxBuffer`: the process group was killed and the rest dropped. */
  overflow: boolean;
  /** It could not be started: `ENOENT` for a program that is not there. */
  startError?: { code: string; message: string };
  /** The launcher died under it (killed from outside): the run was stopped, not finished. */
  lost?: true;
}

export interface Launched {
  /** Its pid, which leads its own process group; undefined until the launcher has started it. */
  pid(): number | undefined;
  /** Kills its process group now, or as soon as it has a pid. */
  killGroup(): void;
  /** Called once, when the process itself has exited (a child of it may still hold its output open). */
  onExit(listener: () => void): void;
  readonly outcome: Promise<LaunchOutcome>;
}

interface Run {
  /** The launcher that started it. */
  helper: HelperProcess;
  pid?: number;
  killed: boolean;
  out: Buffer[][];
  sizes: number[];
  overflow: boolean;
  maxBuffer: number;
  exit?: { code: number | null; signal: string | null };
  exitListeners: (() => void)[];
  settle(outcome: LaunchOutcome): void;
}

type HelperProcess = ChildProcessByStdio<Writable, Readable, null>;

/** Drops one final line break, as a shell's `$(…)` does (and execa did). */
function text(chunks: Buffer[]): string {
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
}

/**
 * SIGKILLs the process group `pid` leads. Never the pid alone: the group exists from the start (the
 * launcher answers once the program is exec'd, after its setpgid), and once the group is gone the pid
 * may already be another process's.
 */
function killGroupOf(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // gone already
  }
}

/**
 * A small long-lived python process that starts the processes of one thread for it.
 *
 * Starting a process from Node forks the whole Node process: the kernel copies the page tables of
 * every thread's heap while it holds the process's memory lock, so every other teammate thread that
 * touches a new page waits too. In a host with twelve teammates (some 430 MB) one start blocked its
 * thread for about 90 ms at the median on a busy machine, and stalled the others with it. The
 * launcher is forked once; each start after that is a fork of a 9 MB python process.
 *
 * It runs with the allow-listed environment (each request carries the full environment of its
 * process), it is killed with the thread that started it (PR_SET_PDEATHSIG), and it quits after
 * `idleMs` without a request; a teammate lets go of its own a second into idle (stopLauncher, from its idle collector), so an
 * idle teammate has none. Kills never go through it: runProcess
 * kills the process group itself, by the pid the launcher reported. The python program is in
 * launcher-program.ts.
 */
export class Launcher {
  private helper: HelperProcess | null = null;
  private starting: Promise<HelperProcess | null> | null = null;
  private readonly runs = new Map<number, Run>();
  private nextId = 1;
  private idleTimer: NodeJS.Timeout | undefined;
  /** stop() came while runs were under way: stop after the last. */
  private stopWhenIdle = false;

  private readonly idleMs: number;
  /** The niceness of its session, so of everything it starts (launcher-program.ts). */
  private readonly niceness: number;

  constructor(
    private readonly python: string,
    options: { idleMs?: number; niceness?: number } = {},
  ) {
    this.idleMs = options.idleMs ?? 30_000;
    this.niceness = options.niceness ?? 0;
  }

  /** The launcher's pid while it runs (tests, diagnostics). */
  get pid(): number | undefined {
    return this.helper?.pid;
  }

  /** Starts `request`, or answers null when no launcher can run here (no python3): start it directly then. */
  async launch(request: LaunchRequest): Promise<Launched | null> {
    const helper = await this.ready();
    if (!helper) return null;
    clearTimeout(this.idleTimer);
    this.stopWhenIdle = false;
    const id = this.nextId++;
    let settle!: (outcome: LaunchOutcome) => void;
    const outcome = new Promise<LaunchOutcome>((resolve) => (settle = resolve));
    const run: Run = { helper, killed: false, out: [[], []], sizes: [0, 0], overflow: false, maxBuffer: request.maxBuffer, exitListeners: [], settle };
    this.runs.set(id, run);
    // While a run is under way the launcher keeps the thread alive: git() waits on nothing else.
    helper.ref();
    (helper.stdout as Socket).ref();
    helper.stdin.write(`${JSON.stringify({ id, argv: request.argv, cwd: request.cwd, env: request.env, input: request.input ?? null })}\n`);
    return {
      pid: () => run.pid,
      killGroup: () => {
        run.killed = true;
        if (run.pid !== undefined) killGroupOf(run.pid);
      },
      onExit: (listener) => {
        if (run.exit) listener();
        else run.exitListeners.push(listener);
      },
      outcome,
    };
  }

  /** Stops the launcher, at once or, while a run is under way, after the last. */
  stop(): void {
    if (this.runs.size > 0) {
      this.stopWhenIdle = true;
      return;
    }
    clearTimeout(this.idleTimer);
    this.helper?.stdin.end();
    this.helper = null;
  }

  private ready(): Promise<HelperProcess | null> {
    if (this.helper) return Promise.resolve(this.helper);
    this.starting ??= this.start().finally(() => (this.starting = null));
    return this.starting;
  }

  /**
   * Starts the launcher and resolves with it once it says it is ready; null when it cannot start or
   * ends before that (no python3, or one that cannot run the program): start directly then.
   */
  private start(): Promise<HelperProcess | null> {
    return new Promise((resolve) => {
      // Its own session: a Ctrl+C or a hang-up at the terminal is the runtime's to handle (it stops
      // its runs and runs git as it shuts down), not a signal that kills every thread's launcher.
      const helper = spawn(this.python, ['-I', '-S', '-c', LAUNCHER_PROGRAM, String(process.pid), LAUNCHER_MARK, String(this.niceness)], { env: childEnv(), stdio: ['pipe', 'pipe', 'ignore'], detached: true });
      let ready = false;
      helper.once('error', () => resolve(null));
      let buffered = '';
      helper.stdout.setEncoding('utf8');
      helper.stdout.on('data', (chunk: string) => {
        buffered += chunk;
        let newline: number;
        while ((newline = buffered.indexOf('\n')) >= 0) {
          const message = JSON.parse(buffered.slice(0, newline));
          buffered = buffered.slice(newline + 1);
          if (message.ready && !ready) {
            ready = true;
            this.helper = helper;
            helper.unref();
            (helper.stdout as Socket).unref();
            resolve(helper);
          } else this.receive(message);
        }
      });
      helper.stdin.on('error', () => undefined);
      // Its output closed: every message it sent has been read, so what is still open was lost with it.
      helper.stdout.once('close', () => {
        if (ready) this.lost(helper);
        else resolve(null);
      });
    });
  }

  private receive(message: { ready?: true; id: number; pid?: number; fd?: 1 | 2; data?: string; exit?: number | null; signal?: string | null; end?: true; error?: string; message?: string }): void {
    const run = this.runs.get(message.id);
    if (!run) return;
    if (message.pid !== undefined) {
      run.pid = message.pid;
      if (run.killed) killGroupOf(run.pid);
    } else if (message.fd !== undefined && message.data !== undefined) {
      if (run.overflow) return;
      const stream = message.fd - 1;
      const data = Buffer.from(message.data, 'base64');
      run.sizes[stream]! += data.length;
      run.out[stream]!.push(data);
      if (run.sizes[stream]! > run.maxBuffer) {
        run.overflow = true;
        if (run.pid !== undefined) killGroupOf(run.pid);
      }
    } else if (message.exit !== undefined) {
      run.exit = { code: message.exit, signal: message.signal ?? null };
      for (const listener of run.exitListeners.splice(0)) listener();
    } else if (message.end) {
      this.settle(message.id, run, { exitCode: run.exit?.code ?? null, signal: run.exit?.signal ?? null });
    } else if (message.error) {
      this.settle(message.id, run, { exitCode: null, signal: null, startError: { code: message.error, message: message.message ?? message.error } });
    }
  }

  private settle(id: number, run: Run, end: Pick<LaunchOutcome, 'exitCode' | 'signal' | 'startError' | 'lost'>): void {
    this.runs.delete(id);
    run.settle({ ...end, stdout: text(run.out[0]!), stderr: text(run.out[1]!), overflow: run.overflow });
    if (this.runs.size === 0 && this.helper) {
      this.helper.unref();
      (this.helper.stdout as Socket).unref();
      clearTimeout(this.idleTimer);
      if (this.stopWhenIdle) this.stop();
      else this.idleTimer = setTimeout(() => this.stop(), this.idleMs).unref();
    }
  }

  /** The launcher died (killed from outside): its runs are killed and fail; the next launch starts another. */
  private lost(helper: HelperProcess): void {
    if (this.helper === helper) this.helper = null;
    for (const [id, run] of this.runs) {
      if (run.helper !== helper) continue;
      if (run.pid !== undefined) killGroupOf(run.pid);
      run.exit ??= { code: null, signal: 'SIGKILL' };
      for (const listener of run.exitListeners.splice(0)) listener();
      this.settle(id, run, { exitCode: run.exit.code, signal: run.exit.signal, lost: true });
    }
  }
}

/** This thread's launchers by niceness (each worker thread has its own module state, so its own). */
const launchers = new Map<number, Launcher>();
/**
 * Runs start directly until this time (ms since the epoch): for good under startDirectly, and for
 * LAUNCHER_RETRY_MS after a launcher could not start, then a launcher is tried again: a start that failed for a moment (no memory for a fork, a python being
 * upgraded) does not give up the code's lower priority for the rest of the thread's life, and where
 * no launcher can run at all it costs one failed start a while.
 */
let directUntil = 0;
const LAUNCHER_RETRY_MS = 30_000;

/**
 * Starts every process directly (execa), not through the thread's launcher: what happens anyway
 * where no launcher can run (no python3). For tests of that path.
 */
export function startDirectly(on: boolean): void {
  directUntil = on ? Number.POSITIVE_INFINITY : 0;
  if (on) {
    for (const launcher of launchers.values()) launcher.stop();
    launchers.clear();
  }
}

/** Stops this thread's launchers (at once, or after the run under way); its next run starts another. */
export function stopLauncher(): void {
  for (const launcher of launchers.values()) launcher.stop();
}

/** The pid of this thread's launcher for runs at `niceness`, while it has one running (tests). */
export function launcherPid(niceness = 0): number | undefined {
  return launchers.get(niceness)?.pid;
}

/**
 * Starts `request` in its own process group through the thread's launcher, or directly where none
 * can run. runProcess is the way to run a command; this is for the runtime's own programs (git).
 */
export async function launchProcess(request: LaunchRequest): Promise<Launched> {
  const python = await pythonProgram();
  if (Date.now() >= directUntil) {
    const niceness = request.niceness ?? 0;
    let launcher = launchers.get(niceness);
    if (!launcher) launchers.set(niceness, (launcher = new Launcher(python, { niceness })));
    const launched = await launcher.launch(request);
    if (launched) return launched;
    directUntil = Date.now() + LAUNCHER_RETRY_MS;
  }
  const { execa } = await import('execa');
  const subprocess = execa(request.argv[0]!, request.argv.slice(1), {
    cwd: request.cwd,
    env: request.env,
    extendEnv: false,
    reject: false,
    detached: true,
    ...(request.input === undefined ? { stdin: 'ignore' as const } : { input: request.input }),
    maxBuffer: request.maxBuffer,
  });
  // Detached, it is a session of its own: set to the niceness the launcher's session would have had.
  if (request.niceness && subprocess.pid !== undefined) void setSessionNiceness(subprocess.pid, request.niceness, () => subprocess.exitCode === null && subprocess.signalCode === null);
  return {
    pid: () => subprocess.pid,
    killGroup: () => {
      const pid = subprocess.pid;
      if (pid === undefined) return;
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        try {
          subprocess.kill('SIGKILL');
        } catch {
          // already gone
        }
      }
    },
    onExit: (listener) => void subprocess.once('exit', listener),
    outcome: subprocess.then((result) => ({
      exitCode: result.exitCode ?? null,
      signal: result.signal ?? null,
      stdout: String(result.stdout ?? ''),
      stderr: String(result.stderr ?? ''),
      overflow: Boolean(result.isMaxBuffer),
      ...(result.exitCode === undefined && result.signal === undefined
        ? { startError: { code: result.code ?? 'EUNKNOWN', message: result.originalMessage ?? result.shortMessage ?? 'unknown error' } }
        : {}),
    })),
  };
}

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bwrapProfile, isInside } from './bwrap-profile.js';
import { childEnv } from './env.js';
import { pidsCgroups, type PidsProbe, RunCgroup } from './pids-cgroup.js';

/**
 * Containment for every process an agent starts. On Linux with bubblewrap: the system read-only, the
 * workspace the only writable place (with a size-limited /tmp and /dev/shm), the board, the home
 * directory and the person's repository out of sight, a PID namespace of its own (so the whole tree
 * dies with it), no network unless allowed. Everywhere: an environment built from an allow-list, a
 * private HOME and TMPDIR, resource limits, and a pids cgroup per run where the host offers one.
 */

export type SandboxMode = 'auto' | 'required' | 'off';

export interface ResourceLimits {
  /**
   * Memory per process: its data — heap and private writable mappings (RLIMIT_DATA). Not its
   * address space (RLIMIT_AS): V8 reserves gigabytes it never touches for WebAssembly (Node's own
   * HTTP client uses it), so any Node program — most MCP servers — died under a 2 GB address space.
   */
  memoryMb: number;
  /** Largest file a process may write (RLIMIT_FSIZE). */
  fileSizeMb: number;
  /** Processes and threads of one run (its pids cgroup; also RLIMIT_NPROC, which the kernel does not apply to root). */
  processes: number;
  /** CPU seconds per process (RLIMIT_CPU). */
  cpuSeconds: number;
  /** Size of the sandbox's /tmp and of its /dev/shm, each (tmpfs, so memory). */
  tmpMb: number;
}

export interface SandboxPolicy {
  mode: SandboxMode;
  /** Stages whose processes may use the network ('*' for all). */
  network: readonly string[];
  limits: ResourceLimits;
  /** Names of environment variables passed through as they are (nothing else of the person's is). */
  passEnv: readonly string[];
}

export const DEFAULT_LIMITS: ResourceLimits = { memoryMb: 2048, fileSizeMb: 256, processes: 1024, cpuSeconds: 120, tmpMb: 256 };

export const DEFAULT_SANDBOX_POLICY: SandboxPolicy = { mode: 'auto', network: [], limits: DEFAULT_LIMITS, passEnv: [] };


/** `sizedTmp`: this bwrap takes `--size` (0.7 and later, and not installed setuid), so /tmp can be bounded. */
export type Containment = { kind: 'bwrap'; bwrap: string; sizedTmp: boolean } | { kind: 'none'; reason: string };

let probed: Containment | null = null;

export function findOnPath(program: string): string | null {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, program);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return null;
}

/** Takes what another thread of this process probed (a teammate thread is told at its start). */
export function probedElsewhere(known: Containment): void {
  probed ??= known;
}

/**
 * Whether bubblewrap is installed and allowed to make namespaces here (a container may forbid it).
 * Probed once per process with a trivial sandbox, running a program by its absolute path: a PATH
 * entry under /tmp is not there inside the probe, whose /tmp is a fresh tmpfs.
 */
export function containment(): Containment {
  if (probed) return probed;
  if (process.platform !== 'linux') return (probed = { kind: 'none', reason: `bubblewrap needs Linux (this is ${process.platform})` });
  const bwrap = findOnPath('bwrap');
  if (!bwrap) return (probed = { kind: 'none', reason: 'bubblewrap (bwrap) is not installed or not on PATH' });
  const run = (sized: boolean) =>
    spawnSync(bwrap, ['--unshare-pid', '--die-with-parent', '--ro-bind', '/', '/', '--proc', '/proc', '--dev', '/dev', ...(sized ? ['--size', '1048576', '--tmpfs', '/tmp'] : []), '/bin/sh', '-c', ':'], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      timeout: 10_000,
      encoding: 'utf8',
    });
  const probe = run(true);
  if (probe.status === 0) return (probed = { kind: 'bwrap', bwrap, sizedTmp: true });
  // An older or setuid bwrap refuses --size; it still sandboxes, with an unbounded /tmp (said by describeContainment).
  const plain = run(false);
  if (plain.status !== 0) {
    const why = (plain.stderr || plain.error?.message || `exit ${plain.status}`).trim().split('\n')[0];
    return (probed = { kind: 'none', reason: `bubblewrap cannot create a sandbox here: ${why}` });
  }
  return (probed = { kind: 'bwrap', bwrap, sizedTmp: false });
}

/** How to get bubblewrap, for the one line that says code runs unsandboxed. */
export const INSTALL_HINT = 'install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap)';

/**
 * The sandbox in one line (`--version`, the start): what contains executed code, and, honestly, what
 * does not — a /tmp bwrap cannot size, a process count nothing bounds (root ignores RLIMIT_NPROC).
 */
export function describeContainment(c: Containment = containment(), pids: PidsProbe = pidsCgroups(), root = isRoot()): string {
  const gaps: string[] = [];
  if (c.kind === 'bwrap' && !c.sizedTmp) gaps.push('/tmp and /dev/shm are NOT size-limited (this bwrap has no --size: it needs 0.7 or later, not setuid)');
  if (pids.kind === 'none' && root) gaps.push(`the process count is NOT limited (running as root, which ignores RLIMIT_NPROC, and no pids cgroup: ${pids.reason})`);
  const line =
    c.kind === 'bwrap'
      ? `sandbox: bubblewrap (${c.bwrap}) — workspace only, no network by default`
      : `sandbox: none — code the agents run is NOT sandboxed (${c.reason}); ${INSTALL_HINT}`;
  return [line, ...gaps].join('; ');
}

function isRoot(): boolean {
  return process.getuid?.() === 0;
}

let prlimitPath: string | null | undefined;

/**
 * The niceness executed code runs at (0 is normal, 19 the lowest). On a busy machine the runtime's own
 * work (claims, hand-overs, the REPL, the web board) goes first and the agents' programs take what is
 * left; on an idle one nothing changes. Every process the code starts inherits it.
 */
export const CODE_NICENESS = 10;
let nicePath: string | null | undefined;

function niceProgram(): string | null {
  if (nicePath === undefined) nicePath = process.platform === 'win32' ? null : findOnPath('nice');
  return nicePath;
}

function prlimit(): string | null {
  if (prlimitPath === undefined) prlimitPath = process.platform === 'linux' ? findOnPath('prlimit') : null;
  return prlimitPath;
}

export interface SandboxOptions {
  /** The one writable directory; processes start in it. */
  workspace: string;
  /** Directories that must not be visible (the board root, the person's repository). */
  hidden: readonly string[];
  /** Paths inside the workspace that must not be visible either (see ProfileOptions.masked). */
  masked?: readonly string[];
  /**
   * Files that code may not create (autoteam's trusted files in the lead's folder): one that a run
   * made where there was none is moved aside once the run has ended (see moveAsideCreated). Hiding
   * covers those that exist; a mount cannot cover a missing file without making it on the host.
   */
  guarded?: readonly string[];
  /**
   * Where the private HOME (`.home`) and TMPDIR (`.tmp`) go, writable inside the sandbox (default: the
   * workspace). The lead's workspace is the person's folder, which they must not litter.
   */
  scratch?: string;
  /** Folders under /tmp a process needs read-only (see ProfileOptions.readOnly). */
  readOnly?: readonly string[];
  /** May the processes use the network. */
  network: boolean;
  limits: ResourceLimits;
  passEnv?: readonly string[];
  /** The environment the allow-list reads from (default: this process's). */
  baseEnv?: NodeJS.ProcessEnv;
}

/** A limit that ended a process, for the tool error the model sees. */
export interface LimitHit {
  limit: 'memory' | 'file size' | 'processes' | 'CPU time' | 'tmp size';
  text: string;
}

/**
 * One sandbox per task: the workspace and what to hide are fixed; `command()` wraps each process.
 */
export class Sandbox {
  readonly kind: 'bwrap' | 'none';

  constructor(
    readonly options: SandboxOptions,
    private readonly contained: Containment = containment(),
    private readonly pids: PidsProbe = pidsCgroups(),
  ) {
    this.kind = contained.kind;
  }

  get workspace(): string {
    return path.resolve(this.options.workspace);
  }

  /** The environment of an executed process: the allow-list, a private HOME and TMPDIR, then `extra`. */
  env(extra: Record<string, string> = {}): Record<string, string> {
    const env = childEnv(this.options.baseEnv ?? process.env, this.options.passEnv ?? []);
    const scratch = path.resolve(this.options.scratch ?? this.workspace);
    const home = path.join(scratch, '.home');
    const tmp = path.join(scratch, '.tmp');
    fs.mkdirSync(home, { recursive: true });
    fs.mkdirSync(tmp, { recursive: true });
    // No __pycache__ folders left in the workspace (or in a commit) by whatever runs Python.
    return { ...env, HOME: home, TMPDIR: tmp, PYTHONDONTWRITEBYTECODE: '1', ...extra };
  }

  /** The guarded files absent now: what a run makes of them is moved aside after it (moveAsideCreated). */
  absentGuarded(): string[] {
    return (this.options.guarded ?? []).filter((file) => !fs.lstatSync(file, { throwIfNoEntry: false }));
  }

  /**
   * Moves what a run made at a guarded path that was `absent` before it to `<name>.refused-<time>`
   * beside it, where autoteam never reads it and the person still finds it; nothing is deleted. Under
   * bubblewrap no process of the run is left to make it again. Returns a line for each, to add to
   * what the run printed.
   */
  moveAsideCreated(absent: readonly string[]): string[] {
    const lines: string[] = [];
    for (const file of absent) {
      if (!fs.lstatSync(file, { throwIfNoEntry: false })) continue;
      const shown = path.relative(this.workspace, file) || path.basename(file);
      const aside = `${file}.refused-${new Date().toISOString().replace(/[:.]/g, '-')}`;
      try {
        fs.renameSync(file, aside);
        lines.push(`[${shown} was moved to ${path.basename(aside)}: it is autoteam's own file, read when autoteam starts, and code run by an agent may not make it; the person can rename it back]`);
      } catch (error) {
        lines.push(`[${shown} was made by this run and could not be moved aside (${(error as Error).message}): autoteam's own file, which code run by an agent may not make]`);
      }
    }
    return lines;
  }

  /** The same containment around another directory (a scratch copy of the workspace). */
  forWorkspace(workspace: string): Sandbox {
    return new Sandbox({ ...this.options, workspace }, this.contained, this.pids);
  }

  /**
   * A pids cgroup for one run, bounded at the process limit; null where the host offers none (then
   * only RLIMIT_NPROC bounds it, and describeContainment says so for root). Rejects when the hierarchy
   * that worked at the probe refuses now: running unbounded without a word would be worse.
   */
  async openCgroup(): Promise<RunCgroup | null> {
    return this.pids.kind === 'cgroup' ? RunCgroup.open(this.pids.cgroups, this.options.limits.processes) : null;
  }

  /**
   * `command args` wrapped in bubblewrap (when there is one), the resource limits, and the run's
   * cgroup. `start.detached`: the caller starts it with no controlling terminal (through a launcher,
   * or detached, in a session of its own). Otherwise bubblewrap gives it a session of its own
   * (`--new-session`), so that it can never reach a terminal to inject keystrokes into; that session
   * runs at niceness 0 whatever the code's own (launcher-program.ts), which is why callers that can
   * start it detached say so. `niceness` is what a detached caller gives the session it starts
   * (a launcher's, or setSessionNiceness by pid): one place decides it, not each caller.
   */
  command(command: string, args: readonly string[], cgroup: RunCgroup | null = null, start: { detached?: boolean } = {}): { command: string; args: string[]; niceness: number } {
    const limited = this.limit(command, args);
    let wrapped = limited;
    if (this.contained.kind === 'bwrap') {
      // The profile depends only on this sandbox's options: built once, not per process.
      this.profile ??= bwrapProfile({
        workspace: this.workspace,
        hidden: this.options.hidden,
        ...(this.options.masked ? { masked: this.options.masked } : {}),
        ...(this.options.scratch ? { scratch: this.options.scratch } : {}),
        network: this.options.network,
        tmpBytes: this.contained.sizedTmp ? this.options.limits.tmpMb * 1024 * 1024 : null,
        pathEnv: this.options.baseEnv?.PATH ?? process.env.PATH ?? '',
        ...(this.options.readOnly ? { readOnly: this.options.readOnly } : {}),
      });
      wrapped = { command: this.contained.bwrap, args: [...(start.detached ? [] : ['--new-session']), ...this.profile, '--', limited.command, ...limited.args] };
    }
    const nice = niceProgram();
    if (nice) wrapped = { command: nice, args: ['-n', String(CODE_NICENESS), wrapped.command, ...wrapped.args] };
    return { ...(cgroup ? cgroup.wrap(wrapped.command, wrapped.args) : wrapped), niceness: CODE_NICENESS };
  }

  private profile: string[] | undefined;

  /**
   * Reads a finished process's result for a limit it hit. `pidsMaxHit`: the run's cgroup refused a
   * fork at pids.max, which names the process limit even when the program carried on.
   */
  limitHit(result: { exitCode: number | null; signal?: string; stderr: string; stdout: string; pidsMaxHit?: boolean }): LimitHit | null {
    const { memoryMb, fileSizeMb, processes, cpuSeconds, tmpMb } = this.options.limits;
    const out = `${result.stderr}\n${result.stdout}`;
    if (result.signal === 'SIGXFSZ' || result.exitCode === 128 + 25 || /File too large|File size limit exceeded/.test(out)) {
      return { limit: 'file size', text: `the file size limit (${fileSizeMb} MB per file) was hit` };
    }
    if (result.signal === 'SIGXCPU' || result.exitCode === 128 + 24 || /CPU time limit exceeded/.test(out)) {
      return { limit: 'CPU time', text: `the CPU time limit (${cpuSeconds} s per process) was hit` };
    }
    if (result.pidsMaxHit || (/Resource temporarily unavailable|fork: retry|EAGAIN.*spawn/i.test(out) && result.exitCode !== 0)) {
      return { limit: 'processes', text: `the process limit (${processes} processes and threads) was hit` };
    }
    // The workspace is on the host's disk; what fills up inside the sandbox is the sized tmpfs.
    if (this.contained.kind === 'bwrap' && this.contained.sizedTmp && /No space left on device|ENOSPC/.test(out)) {
      return { limit: 'tmp size', text: `the size limit of /tmp and /dev/shm (${tmpMb} MB each) was hit; write large files to the workspace` };
    }
    if (/MemoryError|Cannot allocate memory|out of memory|bad_alloc|ENOMEM|Allocation failed/i.test(out) && result.exitCode !== 0) {
      return { limit: 'memory', text: `the memory limit (${memoryMb} MB of data per process) was hit` };
    }
    return null;
  }

  private limit(command: string, args: readonly string[]): { command: string; args: string[] } {
    const { memoryMb, fileSizeMb, processes, cpuSeconds } = this.options.limits;
    const tool = prlimit();
    if (tool) {
      return {
        command: tool,
        args: [`--data=${memoryMb * 1024 * 1024}`, `--fsize=${fileSizeMb * 1024 * 1024}`, `--nproc=${processes}`, `--cpu=${cpuSeconds}`, '--', command, ...args],
      };
    }
    // No prlimit (macOS, BSD): the shell's ulimit, in its own units (KiB; 512-byte blocks for -f in sh).
    const script = `ulimit -d ${memoryMb * 1024} 2>/dev/null; ulimit -f ${fileSizeMb * 2048} 2>/dev/null; ulimit -u ${processes} 2>/dev/null; ulimit -t ${cpuSeconds} 2>/dev/null; exec "$@"`;
    return { command: '/bin/sh', args: ['-c', script, 'sh', command, ...args] };
  }
}

/**
 * The directory autoteam was started in, to hide from executed code (its `.env`, the person's other
 * files) — unless it is `/` or holds the system's programs (then hiding it would hide them too).
 */
export function hiddenStartDir(cwd = process.cwd(), pathEnv = process.env.PATH ?? ''): string[] {
  if (cwd === path.parse(cwd).root) return [];
  const programs = [...pathEnv.split(path.delimiter).filter((entry) => path.isAbsolute(entry)), path.dirname(process.execPath)];
  const home = os.homedir();
  return programs.some((entry) => isInside(cwd, entry) && !isInside(home, entry)) ? [] : [cwd];
}

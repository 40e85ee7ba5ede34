import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { childEnv } from './env.js';

/**
 * Containment for every process an agent starts. On Linux with bubblewrap: the system read-only, the
 * workspace the only writable place, the board, the home directory and the person's repository out
 * of sight, a PID namespace of its own (so the whole tree dies with it), no network unless allowed.
 * Everywhere: an environment built from an allow-list, a private HOME and TMPDIR, and resource limits.
 */

export type SandboxMode = 'auto' | 'required' | 'off';

export interface ResourceLimits {
  /** Address space per process (RLIMIT_AS). */
  memoryMb: number;
  /** Largest file a process may write (RLIMIT_FSIZE). */
  fileSizeMb: number;
  /** Processes of the user (RLIMIT_NPROC; the kernel does not apply it to root). */
  processes: number;
  /** CPU seconds per process (RLIMIT_CPU). */
  cpuSeconds: number;
}

export interface SandboxPolicy {
  mode: SandboxMode;
  /** Stages whose processes may use the network ('*' for all). */
  network: readonly string[];
  limits: ResourceLimits;
  /** Names of environment variables passed through as they are (nothing else of the person's is). */
  passEnv: readonly string[];
}

export const DEFAULT_LIMITS: ResourceLimits = { memoryMb: 2048, fileSizeMb: 256, processes: 1024, cpuSeconds: 120 };

export const DEFAULT_SANDBOX_POLICY: SandboxPolicy = { mode: 'auto', network: [], limits: DEFAULT_LIMITS, passEnv: [] };


export type Containment = { kind: 'bwrap'; bwrap: string } | { kind: 'none'; reason: string };

let probed: Containment | null = null;

function findOnPath(program: string): string | null {
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

/**
 * Whether bubblewrap is installed and allowed to make namespaces here (a container may forbid it).
 * Probed once per process with a trivial sandbox.
 */
export function containment(): Containment {
  if (probed) return probed;
  if (process.platform !== 'linux') return (probed = { kind: 'none', reason: `bubblewrap needs Linux (this is ${process.platform})` });
  const bwrap = findOnPath('bwrap');
  if (!bwrap) return (probed = { kind: 'none', reason: 'bubblewrap (bwrap) is not installed' });
  const probe = spawnSync(bwrap, ['--unshare-pid', '--die-with-parent', '--ro-bind', '/', '/', '--proc', '/proc', '--dev', '/dev', 'true'], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    timeout: 10_000,
    encoding: 'utf8',
  });
  if (probe.status !== 0) {
    const why = (probe.stderr || probe.error?.message || `exit ${probe.status}`).trim().split('\n')[0];
    return (probed = { kind: 'none', reason: `bubblewrap cannot create a sandbox here: ${why}` });
  }
  return (probed = { kind: 'bwrap', bwrap });
}

/** How to get bubblewrap, for the one line that says code runs unsandboxed. */
export const INSTALL_HINT = 'install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap)';

export function describeContainment(c: Containment = containment()): string {
  return c.kind === 'bwrap'
    ? `sandbox: bubblewrap (${c.bwrap}) — workspace only, no network by default`
    : `sandbox: none — code the agents run is NOT sandboxed (${c.reason}); ${INSTALL_HINT}`;
}

let prlimitPath: string | null | undefined;

function prlimit(): string | null {
  if (prlimitPath === undefined) prlimitPath = process.platform === 'linux' ? findOnPath('prlimit') : null;
  return prlimitPath;
}

export interface SandboxOptions {
  /** The one writable directory; processes start in it. */
  workspace: string;
  /** Directories that must not be visible (the board root, the person's repository). */
  hidden: readonly string[];
  /** May the processes use the network. */
  network: boolean;
  limits: ResourceLimits;
  passEnv?: readonly string[];
  /** The environment the allow-list reads from (default: this process's). */
  baseEnv?: NodeJS.ProcessEnv;
}

/** A limit that ended a process, for the tool error the model sees. */
export interface LimitHit {
  limit: 'memory' | 'file size' | 'processes' | 'CPU time';
  text: string;
}

/**
 * One sandbox per task: the workspace and what to hide are fixed; `command()` wraps each process.
 */
export class Sandbox {
  readonly kind: 'bwrap' | 'none';
  private readonly bwrap: string | null;

  constructor(
    readonly options: SandboxOptions,
    contained: Containment = containment(),
  ) {
    this.kind = contained.kind;
    this.bwrap = contained.kind === 'bwrap' ? contained.bwrap : null;
  }

  get workspace(): string {
    return path.resolve(this.options.workspace);
  }

  /** The environment of an executed process: the allow-list, a private HOME and TMPDIR, then `extra`. */
  env(extra: Record<string, string> = {}): Record<string, string> {
    const env = childEnv(this.options.baseEnv ?? process.env, this.options.passEnv ?? []);
    const home = path.join(this.workspace, '.home');
    const tmp = path.join(this.workspace, '.tmp');
    fs.mkdirSync(home, { recursive: true });
    fs.mkdirSync(tmp, { recursive: true });
    // No __pycache__ folders left in the workspace (or in a commit) by whatever runs Python.
    return { ...env, HOME: home, TMPDIR: tmp, PYTHONDONTWRITEBYTECODE: '1', ...extra };
  }

  /** The same containment around another directory (a scratch copy of the workspace). */
  forWorkspace(workspace: string): Sandbox {
    const contained: Containment = this.bwrap ? { kind: 'bwrap', bwrap: this.bwrap } : { kind: 'none', reason: 'unsandboxed' };
    return new Sandbox({ ...this.options, workspace }, contained);
  }

  /** `command args` wrapped in bubblewrap (when there is one) and the resource limits. */
  command(command: string, args: readonly string[]): { command: string; args: string[] } {
    const limited = this.limit(command, args);
    if (!this.bwrap) return limited;
    // The profile depends only on this sandbox's options: built once, not per process.
    this.profile ??= this.bwrapArgs();
    return { command: this.bwrap, args: [...this.profile, '--', limited.command, ...limited.args] };
  }

  private profile: string[] | undefined;

  /** Reads a finished process's result for a limit it hit. */
  limitHit(result: { exitCode: number | null; signal?: string; stderr: string; stdout: string }): LimitHit | null {
    const { memoryMb, fileSizeMb, processes, cpuSeconds } = this.options.limits;
    const out = `${result.stderr}\n${result.stdout}`;
    if (result.signal === 'SIGXFSZ' || result.exitCode === 128 + 25 || /File too large|File size limit exceeded/.test(out)) {
      return { limit: 'file size', text: `the file size limit (${fileSizeMb} MB per file) was hit` };
    }
    if (result.signal === 'SIGXCPU' || result.exitCode === 128 + 24 || /CPU time limit exceeded/.test(out)) {
      return { limit: 'CPU time', text: `the CPU time limit (${cpuSeconds} s per process) was hit` };
    }
    if (/MemoryError|Cannot allocate memory|out of memory|bad_alloc|ENOMEM|Allocation failed/i.test(out) && result.exitCode !== 0) {
      return { limit: 'memory', text: `the memory limit (${memoryMb} MB of address space per process) was hit` };
    }
    if (/Resource temporarily unavailable|fork: retry|EAGAIN.*spawn/i.test(out) && result.exitCode !== 0) {
      return { limit: 'processes', text: `the process limit (${processes}) was hit` };
    }
    return null;
  }

  private limit(command: string, args: readonly string[]): { command: string; args: string[] } {
    const { memoryMb, fileSizeMb, processes, cpuSeconds } = this.options.limits;
    const tool = prlimit();
    if (tool) {
      return {
        command: tool,
        args: [`--as=${memoryMb * 1024 * 1024}`, `--fsize=${fileSizeMb * 1024 * 1024}`, `--nproc=${processes}`, `--cpu=${cpuSeconds}`, '--', command, ...args],
      };
    }
    // No prlimit (macOS, BSD): the shell's ulimit, in its own units (KiB; 512-byte blocks for -f in sh).
    const script = `ulimit -v ${memoryMb * 1024} 2>/dev/null; ulimit -f ${fileSizeMb * 2048} 2>/dev/null; ulimit -u ${processes} 2>/dev/null; ulimit -t ${cpuSeconds} 2>/dev/null; exec "$@"`;
    return { command: '/bin/sh', args: ['-c', script, 'sh', command, ...args] };
  }

  private bwrapArgs(): string[] {
    const workspace = this.workspace;
    const args = ['--die-with-parent', '--new-session', '--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try', '--cap-drop', 'ALL'];
    if (!this.options.network) args.push('--unshare-net');
    args.push('--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp', '--tmpfs', '/var/tmp', '--tmpfs', '/run');
    // The host's service sockets live in /run; with the network on, only its resolver comes back.
    if (this.options.network && fs.existsSync('/run/systemd/resolve')) args.push('--ro-bind', '/run/systemd/resolve', '/run/systemd/resolve');
    // Out of sight: the home directory and the board (and the repository) — tmpfs over them.
    const home = os.homedir();
    const hidden = [home, ...this.options.hidden.map((dir) => path.resolve(dir))].filter((dir) => dir && dir !== '/' && fs.existsSync(dir));
    const outermost = hidden.filter((dir) => !hidden.some((other) => other !== dir && isInside(other, dir)));
    for (const dir of outermost) args.push('--tmpfs', dir);
    // What PATH and this runtime need from under a hidden directory comes back read-only (a pyenv or nvm install).
    for (const dir of this.toolDirs(outermost)) args.push('--ro-bind', dir, dir);
    args.push('--bind', workspace, workspace, '--chdir', workspace);
    // A worktree's `.git` file (or a repository's folder) stays as it is: executed code cannot repoint it.
    const dotGit = path.join(workspace, '.git');
    if (fs.existsSync(dotGit)) args.push('--ro-bind', dotGit, dotGit);
    return args;
  }

  /**
   * What PATH and this runtime need from under a hidden directory, read-only: the PATH entry itself
   * (`~/.cargo/bin`, not `~/.cargo` with its credentials), or the whole root of a version manager that
   * keeps no secrets and whose shims need it (`~/.pyenv`, `~/.nvm`, …). Never the board or the workspace.
   */
  private toolDirs(hidden: readonly string[]): string[] {
    const board = this.options.hidden.map((dir) => path.resolve(dir));
    const wanted = new Set<string>();
    const entries = [...(this.options.baseEnv?.PATH ?? process.env.PATH ?? '').split(path.delimiter), path.dirname(process.execPath)];
    for (const entry of entries) {
      if (!path.isAbsolute(entry)) continue;
      const dir = hidden.find((h) => isInside(h, entry) && entry !== h);
      if (!dir) continue;
      const first = path.relative(dir, entry).split(path.sep)[0]!;
      const bind = TOOLCHAIN_ROOTS.has(first) ? path.join(dir, first) : entry;
      if (board.some((b) => isInside(b, bind) || isInside(bind, b)) || isInside(bind, this.workspace)) continue;
      if (fs.existsSync(bind)) wanted.add(bind);
    }
    return [...wanted].sort();
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

/** Version managers whose whole folder the shims on PATH need, and which hold no credentials. */
const TOOLCHAIN_ROOTS = new Set(['.pyenv', '.nvm', '.rbenv', '.rustup', '.volta', '.asdf', '.nodenv', '.goenv', '.jenv', '.sdkman', '.fnm']);

function isInside(parent: string, child: string): boolean {
  const rel = path.relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

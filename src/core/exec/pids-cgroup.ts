import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { pidAlive } from '../board/pid.js';

/**
 * A pids cgroup per process run: the one process limit the kernel applies to root (RLIMIT_NPROC is
 * not, nor inside a user namespace whose outer uid is root). Each run gets its own child cgroup of
 * this process's cgroup, `autoteam-<pid>-<pid namespace>-<random>`, with `pids.max`; the wrapper
 * puts the run's first process in it before that process can fork, and the run removes it after.
 */

/** Where run cgroups are made: a directory of a cgroup hierarchy that offers the pids controller. */
export interface PidsCgroups {
  version: 1 | 2;
  /** This process's own cgroup in that hierarchy; run cgroups are its children. */
  base: string;
  /** This process's PID namespace (its inode), so a sweep never judges another namespace's pids. */
  namespace: string;
}

export type PidsProbe = { kind: 'cgroup'; cgroups: PidsCgroups } | { kind: 'none'; reason: string };

/** A hierarchy that might do: from /proc/self/mounts and /proc/self/cgroup. */
export interface PidsCandidate {
  version: 1 | 2;
  base: string;
}

/** `\040` and the like in /proc/self/mounts are octal escapes of spaces, tabs, newlines. */
function unescapeMount(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
}

/**
 * The directories in which this process could make a pids child, v2 first: a cgroup2 mount (its
 * controllers are checked later), or a cgroup v1 mount whose options name `pids`.
 */
export function pidsCandidates(mounts: string, selfCgroup: string): PidsCandidate[] {
  const v1Path = new Map<string, string>();
  let v2Path: string | null = null;
  for (const line of selfCgroup.split('\n')) {
    const match = /^(\d+):([^:]*):(.*)$/.exec(line.trim());
    if (!match) continue;
    if (match[1] === '0' && match[2] === '') v2Path = match[3]!;
    else for (const controller of match[2]!.split(',')) v1Path.set(controller, match[3]!);
  }
  const candidates: PidsCandidate[] = [];
  for (const line of mounts.split('\n')) {
    const [, mountPoint, type, options] = line.split(' ');
    if (!mountPoint || !type || !options) continue;
    const own = type === 'cgroup2' ? v2Path : type === 'cgroup' && options.split(',').includes('pids') ? (v1Path.get('pids') ?? null) : null;
    // A path outside this namespace's view (`/../..`) cannot be reached through this mount.
    if (own === null || !own.startsWith('/') || own.split('/').includes('..')) continue;
    candidates.push({ version: type === 'cgroup2' ? 2 : 1, base: path.join(unescapeMount(mountPoint), own) });
  }
  return candidates.sort((a, b) => b.version - a.version);
}

function pidNamespace(): string {
  try {
    return /\[(\d+)\]/.exec(fs.readlinkSync('/proc/self/ns/pid'))?.[1] ?? '0';
  } catch {
    return '0';
  }
}

/**
 * Whether this process can make pids cgroups, tried for real: a child made, its `pids.max` found, the
 * child removed. v2 also needs pids in the parent's `cgroup.subtree_control`; enabling it is refused
 * (EBUSY) in a cgroup that holds processes, as ours does unless it is the root of the hierarchy.
 */
export function probePidsCgroups(files = { mounts: '/proc/self/mounts', self: '/proc/self/cgroup' }): PidsProbe {
  if (process.platform !== 'linux') return { kind: 'none', reason: `cgroups need Linux (this is ${process.platform})` };
  let candidates: PidsCandidate[];
  try {
    candidates = pidsCandidates(fs.readFileSync(files.mounts, 'utf8'), fs.readFileSync(files.self, 'utf8'));
  } catch (error) {
    return { kind: 'none', reason: `cannot read this process's cgroups: ${(error as Error).message}` };
  }
  if (candidates.length === 0) return { kind: 'none', reason: 'no cgroup hierarchy with the pids controller is mounted' };
  const namespace = pidNamespace();
  const reasons: string[] = [];
  for (const candidate of candidates) {
    const why = tryHierarchy(candidate, namespace);
    if (why === null) return { kind: 'cgroup', cgroups: { ...candidate, namespace } };
    reasons.push(why);
  }
  return { kind: 'none', reason: reasons.join('; ') };
}

function tryHierarchy({ version, base }: PidsCandidate, namespace: string): string | null {
  try {
    if (version === 2) {
      const controllers = fs.readFileSync(path.join(base, 'cgroup.controllers'), 'utf8').split(/\s+/);
      if (!controllers.includes('pids')) return `cgroup v2 at ${base} does not offer the pids controller`;
      const enabled = fs.readFileSync(path.join(base, 'cgroup.subtree_control'), 'utf8').split(/\s+/);
      if (!enabled.includes('pids')) fs.writeFileSync(path.join(base, 'cgroup.subtree_control'), '+pids');
    }
    const probe = path.join(base, `autoteam-${process.pid}-${namespace}-probe`);
    fs.mkdirSync(probe, { recursive: true });
    try {
      fs.writeFileSync(path.join(probe, 'pids.max'), '8');
    } finally {
      fs.rmdirSync(probe);
    }
    return null;
  } catch (error) {
    const { code, message } = error as NodeJS.ErrnoException;
    return `cgroup v${version} at ${base}: ${code === 'EBUSY' ? 'cannot enable pids for a child of a cgroup that holds processes' : message}`;
  }
}

/** One run's cgroup. Made before the run starts, removed (after killing what is left) when it ends. */
export class RunCgroup {
  private constructor(readonly dir: string) {}

  /**
   * Makes the cgroup with its `pids.max`; rejects when the hierarchy refuses (the caller says so).
   * Off the event loop: under load the kernel takes a millisecond or more to make or remove a cgroup,
   * and the teammates that share the thread would wait for it.
   */
  static async open(cgroups: PidsCgroups, max: number): Promise<RunCgroup> {
    const dir = path.join(cgroups.base, `autoteam-${process.pid}-${cgroups.namespace}-${randomBytes(4).toString('hex')}`);
    await fs.promises.mkdir(dir);
    try {
      await fs.promises.writeFile(path.join(dir, 'pids.max'), String(max));
    } catch (error) {
      await fs.promises.rmdir(dir).catch(() => undefined);
      throw error;
    }
    return new RunCgroup(dir);
  }

  /**
   * `command args` started inside this cgroup: the shell writes its own pid into `cgroup.procs` and
   * then becomes the command, so nothing of the run exists outside the cgroup, not even for a fork.
   */
  wrap(command: string, args: readonly string[]): { command: string; args: string[] } {
    return { command: '/bin/sh', args: ['-c', 'echo $$ > "$0/cgroup.procs" && exec "$@"', this.dir, command, ...args] };
  }

  /** Whether a fork or clone was refused at `pids.max` (the `max` count of `pids.events`). */
  maxHit(): boolean {
    try {
      return /^max\s+[1-9]/m.test(fs.readFileSync(path.join(this.dir, 'pids.events'), 'utf8'));
    } catch {
      return false;
    }
  }

  /** SIGKILLs every process still in the cgroup; returns how many were signalled. */
  killAll(): number {
    return killCgroup(this.dir);
  }

  /**
   * Kills what is left and removes the cgroup. A killed process leaves the cgroup only once it has
   * exited, so the removal is tried again a few times; a cgroup still busy after that is left for
   * the sweep of a later autoteam process.
   */
  async remove(): Promise<boolean> {
    return removeCgroup(this.dir);
  }
}

function killCgroup(dir: string): number {
  let pids: number[];
  try {
    pids = fs.readFileSync(path.join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number);
  } catch {
    return 0;
  }
  let killed = 0;
  for (const pid of pids) {
    // 0: a process of another PID namespace, which this one cannot name.
    if (!(pid > 0) || pid === process.pid) continue;
    try {
      process.kill(pid, 'SIGKILL');
      killed++;
    } catch {
      // gone already
    }
  }
  return killed;
}

async function removeCgroup(dir: string): Promise<boolean> {
  for (let attempt = 0; attempt < 50; attempt++) {
    killCgroup(dir);
    try {
      await fs.promises.rmdir(dir);
      return true;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return true;
      if (code !== 'EBUSY') return false;
    }
    await delay(Math.min(5 * 2 ** attempt, 100));
  }
  return false;
}

const RUN_CGROUP = /^autoteam-(\d+)-(\d+)-[0-9a-z]+$/;

/**
 * Removes the run cgroups of autoteam processes of this PID namespace that are gone (a SIGKILLed
 * teammate leaves its cgroup behind), killing what still runs in them; returns how many it removed.
 */
export function sweepCgroups(cgroups: PidsCgroups): number {
  let names: string[];
  try {
    names = fs.readdirSync(cgroups.base);
  } catch {
    return 0;
  }
  let removed = 0;
  for (const name of names) {
    const match = RUN_CGROUP.exec(name);
    if (!match || match[2] !== cgroups.namespace) continue;
    const owner = Number(match[1]);
    if (owner === process.pid || pidAlive(owner)) continue;
    const dir = path.join(cgroups.base, name);
    killCgroup(dir);
    try {
      fs.rmdirSync(dir);
      removed++;
    } catch {
      // still busy with processes being killed: the next sweep takes it
    }
  }
  return removed;
}

let probed: PidsProbe | null = null;

/** probePidsCgroups, once per process (the host's cgroups do not change under a running autoteam). */
export function pidsCgroups(): PidsProbe {
  return (probed ??= probePidsCgroups());
}

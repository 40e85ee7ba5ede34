import fs from 'node:fs';
import { LAUNCHER_MARK } from '../core/exec/launcher-program.js';

/** Clock ticks a second in /proc's times (USER_HZ: 100 on Linux everywhere it runs). */
const TICKS = 100;

/**
 * The fields of /proc/<pid>/stat after the command (which may hold spaces and parentheses): state is
 * the first, the parent's pid the second, utime the 12th, stime the 13th. Null when it is gone.
 */
function statFields(pid: number | string): string[] | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/** CPU time (user + system) process `pid` has spent itself, in ms; 0 when it is gone. */
export function procCpuMs(pid: number): number {
  const fields = statFields(pid);
  return fields ? ((Number(fields[11]) + Number(fields[12])) / TICKS) * 1000 : 0;
}

/** Resident memory of process `pid` in bytes; 0 when it is gone. */
export function procRss(pid: number): number {
  try {
    return Number(fs.readFileSync(`/proc/${pid}/statm`, 'utf8').split(' ')[1]) * 4096;
  } catch {
    return 0;
  }
}

/** The process launchers (core/exec/launcher.ts) this process's threads run now. */
export function ownLaunchers(): number[] {
  if (process.platform !== 'linux') return [];
  const found: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    if (Number(statFields(entry)?.[1]) !== process.pid) continue;
    try {
      if (fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').includes(LAUNCHER_MARK)) found.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/** The machine's CPU time so far, busy and in all, in ticks summed over its cores (/proc/stat); null off Linux. */
export function machineCpu(): { busy: number; total: number } | null {
  try {
    const fields = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal (guest time is already in user).
    const total = fields.slice(0, 8).reduce((sum, value) => sum + value, 0);
    return { busy: total - fields[3]! - fields[4]!, total };
  } catch {
    return null;
  }
}

/**
 * How long this process's threads have waited, ready to run, for a core (the second field of
 * /proc/self/task/<tid>/schedstat), in ms; null where the kernel keeps no such count. A thread that
 * ended is no longer counted.
 */
export function threadsWaitMs(): number | null {
  let tids: string[];
  try {
    tids = fs.readdirSync('/proc/self/task');
  } catch {
    return null;
  }
  let ns = 0;
  for (const tid of tids) {
    try {
      ns += Number(fs.readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ')[1]);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return null; // no schedstat at all
    }
  }
  return Number.isFinite(ns) ? ns / 1e6 : null;
}

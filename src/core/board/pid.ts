import fs from 'node:fs';

/**
 * Whether `pid` names a live process on this host (EPERM: alive, owned by someone else). A zombie —
 * killed, not yet reaped by its parent, as after `timeout -s KILL` until PID 1 collects it — is dead.
 */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true; // no /proc (not Linux): kill(0) is all there is
  }
}

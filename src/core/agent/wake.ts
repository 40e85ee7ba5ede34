import { ANY_ROLE } from '../board/task-checks.js';

export type WakeReason = 'notified' | 'timeout' | 'aborted';

/**
 * A level-triggered wake-up: a notify() that arrives while nobody waits is kept for the next wait(),
 * so a board change between "scan found nothing" and "go to sleep" is never lost.
 */
export class Wake {
  private pending = false;
  private waiter: ((reason: WakeReason) => void) | null = null;

  notify(): void {
    const waiter = this.waiter;
    if (waiter) {
      this.waiter = null;
      waiter('notified');
    } else {
      this.pending = true;
    }
  }

  wait(ms: number, signal?: AbortSignal): Promise<WakeReason> {
    if (this.pending) {
      this.pending = false;
      return Promise.resolve('notified');
    }
    if (signal?.aborted) return Promise.resolve('aborted');
    return new Promise((resolve) => {
      const finish = (reason: WakeReason) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        if (this.waiter === finish) this.waiter = null;
        resolve(reason);
      };
      const onAbort = () => finish('aborted');
      const timer = setTimeout(() => finish('timeout'), Math.max(0, ms));
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiter = finish;
    });
  }
}

/**
 * Which idle teammates a board whose claimable tasks are `open` gives work, from `idle` in the order
 * they should go: as many of a role as there are tasks for it, then as many as there are tasks for
 * any role; teammates of role `any` last, for what is left. One task wakes one engineer of four, not
 * all four to race for its claim (each loser scans, takes the claim lock and goes back to sleep). A
 * teammate woken that claims nothing (another process's claimed first) costs a scan; one that cannot
 * claim (it is leaving) is covered by the wake its exit brings, and by the idle poll.
 */
export function wakesFor(open: ReadonlyArray<{ role: string | null }>, idle: ReadonlyArray<{ name: string; role: string }>): string[] {
  const left = new Map<string | null, number>();
  for (const task of open) left.set(task.role, (left.get(task.role) ?? 0) + 1);
  const woken: string[] = [];
  // A teammate of role `any` takes a task of any role, after the teammates of the task's own role.
  const ordered = [...idle.filter((member) => member.role !== ANY_ROLE), ...idle.filter((member) => member.role === ANY_ROLE)];
  for (const { name, role } of ordered) {
    const anyKey = role === ANY_ROLE ? [...left.keys()].find((key) => left.get(key)! > 0) : undefined;
    const key = left.get(role) ? role : left.get(null) ? null : anyKey;
    if (key === undefined) continue;
    left.set(key, left.get(key)! - 1);
    woken.push(name);
  }
  return woken;
}

/**
 * Which teammates a board change wakes. Of the idle ones, those the board has work for (`wakesFor`),
 * the one heard from last first (it worked last: its code is compiled and its process launchers
 * still run), except that one woken for a change and not heard from since goes last: it may be
 * claiming the task that woke it and not have said so yet, and a second task must not wait behind
 * that. One at work on a task scans the board anyway when it goes back to idle, so it is not sent a
 * wake it would not read; but a change that came while it was busy may have landed after that scan
 * began, so it is woken when its `idle` arrives. One waiting on an answer or a plan decision is woken
 * by every change: the change may be its task's cancel, and its wait ends on it (TeammateInbox.waitFor).
 * One that scanned and claimed nothing says so (`looked`): a task posted while it scanned may have
 * sent its wake to another, still taken for idle, that was claiming the task before; so one that
 * looked is woken again when the board changed since it was last woken and still has work for it.
 * The wake is level-triggered (Wake), so an extra one costs a scan, never a lost change.
 */
export class BoardWakes {
  /** Teammates at work, whether a board change came since, and whether they wait (status `waiting`). */
  private readonly atWork = new Map<string, { missed: boolean; waiting: boolean }>();
  /** When each teammate was last woken for a change, and last reported a status, on one count. */
  private readonly woken = new Map<string, number>();
  private readonly heard = new Map<string, number>();
  /** When each teammate last said it scanned and claimed nothing (not a status: an idle one polls), and when the board last changed. */
  private readonly looks = new Map<string, number>();
  private lastChange = 0;
  private count = 0;

  /**
   * The board changed: the names of `team` to wake now. `open` reads the claimable tasks, only when
   * a teammate is idle; when it cannot be read, every idle one is woken to read for itself.
   */
  changed(team: Iterable<{ name: string; role: string }>, open: () => ReadonlyArray<{ role: string | null }>): string[] {
    this.lastChange = ++this.count;
    const idle: Array<{ name: string; role: string }> = [];
    const waiting: string[] = [];
    for (const member of team) {
      const work = this.atWork.get(member.name);
      if (!work) idle.push(member);
      else {
        work.missed = true;
        if (work.waiting) waiting.push(member.name);
      }
    }
    if (idle.length === 0) return waiting;
    let tasks: ReadonlyArray<{ role: string | null }>;
    try {
      tasks = open();
    } catch {
      return [...idle.map((member) => member.name), ...waiting];
    }
    const heard = (name: string) => this.heard.get(name) ?? 0;
    // Answered by a status, or by a scan that found nothing (`looked`, which is no sign it worked last).
    const unanswered = (name: string) => Number((this.woken.get(name) ?? 0) > Math.max(heard(name), this.looks.get(name) ?? 0));
    idle.sort((a, b) => unanswered(a.name) - unanswered(b.name) || heard(b.name) - heard(a.name));
    const names = wakesFor(tasks, idle);
    for (const name of names) this.woken.set(name, ++this.count);
    return [...names, ...waiting];
  }

  /** `name` reported `status`: true when it must be woken now for a change it was not told of. */
  status(name: string, status: string): boolean {
    this.heard.set(name, ++this.count);
    if (status === 'working' || status === 'waiting') {
      const waiting = status === 'waiting';
      const work = this.atWork.get(name);
      if (!work) {
        this.atWork.set(name, { missed: false, waiting });
        return false;
      }
      // Waiting from now: a change that came while it worked (before this status arrived) may be its
      // task's cancel, which its wait must see.
      const wake = waiting && !work.waiting && work.missed;
      work.waiting = waiting;
      return wake;
    }
    const work = this.atWork.get(name);
    this.atWork.delete(name);
    return work?.missed ?? false;
  }

  /**
   * `name`, of `role` and idle, scanned the board and claimed nothing: true when it must be woken
   * again, because the board changed since it was last woken or looked and `open` (the claimable
   * tasks) has work for it. Without a change since, a task it cannot claim never wakes it twice.
   */
  looked(name: string, role: string, open: () => ReadonlyArray<{ role: string | null }>): boolean {
    const since = Math.max(this.woken.get(name) ?? 0, this.looks.get(name) ?? 0);
    this.looks.set(name, ++this.count);
    if (this.atWork.has(name) || this.lastChange < since) return false;
    try {
      return wakesFor(open(), [{ name, role }]).length > 0;
    } catch {
      return false;
    }
  }

  /** `name` is gone: a teammate started later under the name starts idle. */
  forget(name: string): void {
    this.atWork.delete(name);
    this.woken.delete(name);
    this.heard.delete(name);
    this.looks.delete(name);
  }
}

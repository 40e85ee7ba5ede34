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
 * Whether a board whose claimable tasks are `open` has work for a teammate of a role: a task for
 * that role, or one for any role. A board change wakes an idle teammate only then (one that woke
 * for nothing would still ask the board, on PostgreSQL three statements). Every change that makes a
 * task claimable is itself a change, so the filter loses no wake; a task claimable by time alone (a
 * lease or a backoff running out) is the idle poll's.
 */
export function workFor(open: ReadonlyArray<{ role: string | null }>): (role: string) => boolean {
  const roles = new Set(open.map((task) => task.role));
  return roles.has(null) ? () => true : (role) => roles.has(role);
}

/**
 * Which teammates a board change wakes. An idle one at once. One at work on a task (or waiting on an
 * answer, which its inbox wakes) scans the board anyway when it goes back to idle, so it is not sent
 * a wake it would not read; but a change that came while it was busy may have landed after that scan
 * began, so it is woken when its `idle` arrives. The wake is level-triggered (Wake), so an extra one
 * costs a scan, never a lost change.
 */
export class BoardWakes {
  /** Teammates at work, and whether a board change came since. */
  private readonly atWork = new Map<string, { missed: boolean }>();

  /** The board changed: the names of `names` to wake now. */
  changed(names: Iterable<string>): string[] {
    const now: string[] = [];
    for (const name of names) {
      const work = this.atWork.get(name);
      if (work) work.missed = true;
      else now.push(name);
    }
    return now;
  }

  /** `name` reported `status`: true when it must be woken now for a change it was not told of. */
  status(name: string, status: string): boolean {
    if (status === 'working' || status === 'waiting') {
      if (!this.atWork.has(name)) this.atWork.set(name, { missed: false });
      return false;
    }
    const work = this.atWork.get(name);
    this.atWork.delete(name);
    return work?.missed ?? false;
  }

  /** `name` is gone: a teammate started later under the name starts idle. */
  forget(name: string): void {
    this.atWork.delete(name);
  }
}

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

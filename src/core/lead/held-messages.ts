import type { Message } from '../board/schemas.js';

/**
 * The lead's inbox in causal order: a message is delivered once the events its sender posted before
 * sending it have arrived (`caughtUp`, see agent/event-order.ts); until then it is held, and so is
 * every later message of the same sender. Other senders are not held behind it.
 */
export class HeldMessages {
  private held: Message[] = [];
  private releasing = false;

  constructor(
    private readonly caughtUp: (message: Message) => boolean,
    private readonly deliver: (message: Message) => void,
  ) {}

  /** How many messages wait for their sender's events. */
  get size(): number {
    return this.held.length;
  }

  add(message: Message): void {
    this.held.push(message);
    // Added while delivering (a listener that drained again): it came later, it waits its turn.
    if (!this.releasing) this.release();
  }

  /** Delivers what can be delivered now (call when events arrive, or a sender's thread is gone). */
  release(): void {
    if (this.held.length === 0 || this.releasing) return;
    this.releasing = true;
    const blocked = new Set<string>();
    const still: Message[] = [];
    // By index: a message added during a delivery is looked at in this pass, after the others.
    let i = 0;
    try {
      for (; i < this.held.length; i++) {
        const message = this.held[i]!;
        if (!blocked.has(message.from) && this.caughtUp(message)) {
          this.deliver(message);
        } else {
          blocked.add(message.from);
          still.push(message);
        }
      }
    } finally {
      // A delivery that threw is not repeated; what it had not reached yet stays held.
      this.held = [...still, ...this.held.slice(i + 1)];
      this.releasing = false;
    }
  }
}

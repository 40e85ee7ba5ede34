import { LeadAgent } from '../core/lead/lead-agent.js';
import type { LeadSession } from '../core/lead/session.js';

/** The lead agent behind free text, one conversation turn at a time (its history is not re-entrant). */
export class LeadChat {
  private readonly agent: LeadAgent;
  private queue: Promise<unknown> = Promise.resolve();
  private pending = 0;

  constructor(session: LeadSession) {
    this.agent = new LeadAgent(session);
  }

  get busy(): boolean {
    return this.pending > 0;
  }

  ask(text: string): Promise<string> {
    this.pending++;
    const turn = this.queue.then(() => this.agent.handle(text)).then((reply) => reply.text);
    this.queue = turn.catch(() => undefined).finally(() => this.pending--);
    return turn;
  }

  cancel(): void {
    this.agent.cancel();
  }
}

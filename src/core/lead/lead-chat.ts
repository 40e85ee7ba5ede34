import type { LeadAgent, LeadReply } from './lead-agent.js';

/** The lead agent behind free text, one conversation turn at a time (its history is not re-entrant). */
export class LeadChat {
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly agent: LeadAgent) {}

  ask(text: string): Promise<LeadReply> {
    const turn = this.queue.then(() => this.agent.handle(text));
    this.queue = turn.catch(() => undefined);
    return turn;
  }

  /** Stops the turn under way and every later one (the session is closing). */
  cancel(): void {
    this.agent.cancel();
  }
}

import type { BoardOutage } from '../board/outage.js';
import { type Mailbox, mergeRejected, type RejectedLines } from '../board/mailbox.js';
import type { Member, Message } from '../board/schemas.js';
import type { ProtocolRequest, RequestStore } from '../board/requests.js';
import type { TaskBoardLike } from '../board/task-rules.js';
import { AutoteamError, serializeError } from '../errors.js';
import { HeldMessages } from './held-messages.js';
import type { LeadEvent } from './session-types.js';

/**
 * The lead's inbox as the session reads it: drained in serial batches, each message told after the
 * events its sender posted before it (HeldMessages), questions handed to the desk and the rest kept
 * for /inbox; plan requests are decided here. Unreadable lines are told once and kept until /inbox shows them.
 */
export class LeadInbox {
  private draining: Promise<void> = Promise.resolve();
  private closed = false;
  /** Messages for the person that /inbox shows (and clears). */
  private readonly unread: Message[] = [];
  /** Lines of the lead's inbox that could not be read, until /inbox shows them. */
  private rejected: RejectedLines | null = null;
  private readonly held: HeldMessages;

  constructor(
    private readonly deps: {
      mailbox: Mailbox;
      requests: RequestStore;
      lead: () => string;
      /** Whether the session has seen every event `message`'s sender posted before sending it. */
      caughtUp: (message: Message) => boolean;
      /** A teammate's question, for the question desk. */
      asked: (message: Message) => void;
      emit: (event: LeadEvent) => void;
      /** A board that cannot be reached: its first error is said, the rest counted (BoardOutage). */
      outage?: Pick<BoardOutage, 'hides'>;
    },
  ) {
    this.held = new HeldMessages(deps.caughtUp, (message) => this.dispatch(message));
  }

  /** Tells the messages whose senders' earlier events have now been seen. */
  release(): void {
    this.held.release();
  }

  /** Drains the inbox after any drain under way; each message is dispatched once. */
  drain(): void {
    if (this.closed) return;
    this.draining = this.draining.then(async () => {
      try {
        // A drain takes one batch of the inbox: a few per call, the rest at the next event or tick.
        for (let batch = 0; batch < 16; batch++) {
          const lead = this.deps.lead();
          const messages = await this.deps.mailbox.drain(lead);
          for (const message of messages) this.held.add(message);
          const rejected = this.deps.mailbox.takeRejected(lead);
          if (rejected) {
            this.rejected = mergeRejected(this.rejected, rejected);
            this.deps.emit({ type: 'notice', text: `${rejected.count} unreadable line${rejected.count === 1 ? '' : 's'} of the lead's inbox moved to ${rejected.movedTo} (/inbox shows which)` });
          }
          if (messages.length === 0) break;
        }
      } catch (error) {
        const { code, message } = serializeError(error);
        if (this.deps.outage?.hides('lead inbox', code, message)) return;
        this.deps.emit({ type: 'error', code, message: `lead inbox: ${message}` });
      }
    });
  }

  /** Drains the inbox and resolves once this drain (and any before it) is done. */
  drained(): Promise<void> {
    this.drain();
    return this.draining;
  }

  /** The last drain (unless `lastDrain` is false), then no more: nothing is told after the session closed. */
  async close(lastDrain = true): Promise<void> {
    if (lastDrain) this.drain();
    await this.draining;
    this.closed = true;
  }

  takeUnread(): Message[] {
    return this.unread.splice(0);
  }

  takeRejectedLines(): RejectedLines | null {
    const found = this.rejected;
    this.rejected = null;
    return found;
  }

  /** Decides a plan-approval request and tells the teammate. */
  decidePlan(requestId: string, approve: boolean, feedback = ''): Promise<void> {
    return decidePlan(this.deps, this.deps.lead(), requestId, approve, feedback);
  }

  /** The lead and members whose inbox has had unreadable lines moved aside, with how many (none: absent). */
  async rejectedCounts(): Promise<Record<string, number>> {
    const counts: Record<string, number> = {};
    for (const name of this.deps.mailbox.registry.names()) {
      const count = await this.deps.mailbox.rejectedCount(name).catch(() => 0);
      if (count > 0) counts[name] = count;
    }
    return counts;
  }

  private dispatch(message: Message): void {
    switch (message.type) {
      case 'question':
        this.deps.asked(message);
        return;
      case 'pipeline_update':
        this.unread.push(message);
        this.deps.emit({ type: 'pipeline', pipeline: Number(message.pipeline), status: String(message.status), content: message.content });
        return;
      case 'plan_approval_request':
        this.unread.push(message);
        this.deps.emit({ type: 'plan', requestId: String(message.requestId), from: message.from, plan: message.content });
        return;
      default:
        this.unread.push(message);
        this.deps.emit({ type: 'message', message });
    }
  }
}

/** Decides a plan-approval request, as `lead`, and tells the teammate (a second decision is refused). */
export async function decidePlan(parts: { requests: RequestStore; mailbox: Mailbox }, lead: string, requestId: string, approve: boolean, feedback = ''): Promise<void> {
  const { ok, request } = await parts.requests.resolve(requestId, approve, feedback || undefined);
  if (!ok) throw new AutoteamError(`plan request ${requestId} was already ${request.status}`, 'ALREADY_DECIDED');
  await parts.mailbox.send(lead, request.from, feedback || (approve ? 'Approved.' : 'Rejected.'), 'plan_approval_response', { requestId, approve });
}

/**
 * The plans waiting for the person: pending requests whose teammate still holds their task. One a
 * teammate left pending when it went away (a killed process) waits for nobody, and is not shown.
 */
export function waitingPlans(requests: Pick<RequestStore, 'list'>, tasks: Pick<TaskBoardLike, 'list'>): ProtocolRequest[] {
  const held = new Map(tasks.list().flatMap((task) => (task.status === 'in_progress' ? [[task.id, task.owner] as const] : [])));
  return requests.list({ kind: 'plan', status: 'pending' }).filter((request) => request.task === null || held.get(request.task) === request.from);
}

/**
 * The tasks whose teammate waits for the person's decision on its plan. The requests (every one the
 * board has had) are read only while a member of the registry's `members` says it waits: a wait for
 * work in flight asks this on every change.
 */
export function awaitingPlans(requests: Pick<RequestStore, 'list'>, tasks: Pick<TaskBoardLike, 'list'>, members: readonly Member[]): Set<number> {
  if (!members.some((member) => member.status === 'waiting')) return new Set();
  return new Set(waitingPlans(requests, tasks).flatMap(({ task }) => (task === null ? [] : [task])));
}

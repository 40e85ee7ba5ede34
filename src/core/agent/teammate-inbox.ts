import type { Mailbox } from '../board/mailbox.js';
import type { RequestStore } from '../board/requests.js';
import type { Message } from '../board/schemas.js';
import { formatMessages } from '../tools/read-inbox.js';
import type { Wake } from './wake.js';

/**
 * Whether a teammate's inbox may hold something new, for a teammate whose host tells it of every
 * message (a thread: its process hears each inbox change, and its wake says so). Between two model
 * turns, and on each idle wake, the inbox is read only when a message was told of since the last read,
 * or when none was read for a poll's interval (news lost with a dropped connection): on a PostgreSQL
 * board an empty inbox's read was a round trip before every model call. Without a hint every such
 * read is made, as a teammate told of nothing must.
 */
export class MailHint {
  private told = true;
  private readAt = Number.NEGATIVE_INFINITY;

  /** `now`: a monotonic clock in ms (a wall clock stepped back would stop the interval's reads). */
  constructor(private readonly now: () => number = () => performance.now()) {}

  /** A message came for this teammate (or may have). */
  arrived(): void {
    this.told = true;
  }

  /**
   * Whether to read the inbox now. Saying yes clears the news before the read starts: a message that
   * lands during the read is told of again, and read next time.
   */
  due(everyMs: number): boolean {
    // A tenth early: the poll's timer that wakes an idle teammate may fire a little before the interval is up.
    if (!this.told && this.now() - this.readAt < everyMs * 0.9) return false;
    this.reading();
    return true;
  }

  /** A read starts whatever the news (a wait for an answer reads on every wake): what was told is in it. */
  reading(): void {
    this.told = false;
    this.readAt = this.now();
  }
}

/**
 * A teammate's side of its inbox and of the shutdown protocol: messages drained but not yet handled
 * wait here (a tool waiting for one answer must not lose the others), and a shutdown request seen
 * but not yet decided is kept so it outlives the loop that saw it.
 */
export class TeammateInbox {
  private readonly pending: Message[] = [];
  /** A shutdown request seen but not yet decided. */
  shutdownRequest: Message | null = null;

  constructor(
    private readonly name: string,
    private readonly mailbox: Mailbox,
    private readonly requests: RequestStore,
    private readonly wake: Wake,
    private readonly pollMs: number,
    /** When the teammate started (ms): a shutdown request sent before then was for an earlier one. */
    private readonly startedAt = 0,
    /** Told of each message by the host; without one the inbox is read every time. */
    private readonly hint?: MailHint,
  ) {}

  /**
   * Its inbox's new messages, without shutdown requests left over from before it started. A read that
   * fails, or that brought messages (a drain takes a batch: more may wait), leaves news for the next.
   */
  private async drain(): Promise<Message[]> {
    let drained: Message[];
    try {
      drained = await this.mailbox.drain(this.name);
    } catch (error) {
      this.hint?.arrived();
      throw error;
    }
    if (drained.length > 0) this.hint?.arrived();
    return drained.filter((m) => m.type !== 'shutdown_request' || Date.parse(m.at) >= this.startedAt);
  }

  /** Everything waiting: held-back messages first, then the inbox (read when the hint says it may hold something). */
  async take(): Promise<Message[]> {
    const drained = !this.hint || this.hint.due(this.pollMs) ? await this.drain() : [];
    return [...this.pending.splice(0), ...drained];
  }

  /**
   * Waits for a message matching `match`; others are held back. A shutdown request ends the wait, and
   * so does `ended` (the task waited on is cancelled or no longer ours), asked again on every wake:
   * the board change that ended it wakes this teammate, so the wait ends then, not on a timer.
   */
  async waitFor(match: (m: Message) => boolean, timeoutMs: number, signal: AbortSignal, ended: () => boolean = () => false): Promise<Message | null> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const queued = this.pending.findIndex(match);
      if (queued >= 0) return this.pending.splice(queued, 1)[0]!;
      this.hint?.reading();
      for (const message of await this.drain()) this.pending.push(message);
      const found = this.pending.findIndex(match);
      if (found >= 0) return this.pending.splice(found, 1)[0]!;
      // The loop answers a shutdown request on its next turn.
      if (this.pending.some((m) => m.type === 'shutdown_request')) return null;
      const remaining = deadline - Date.now();
      if (signal.aborted || remaining <= 0 || ended()) return null;
      await this.wake.wait(Math.min(this.pollMs, remaining), signal);
    }
  }

  /**
   * Between two tasks: a shutdown request (held, or just arrived) is approved and its reason
   * returned as `exit`, the rest put back for whoever next runs under this name. Otherwise the
   * messages to talk about; answers are kept for the question that will be asked again.
   */
  async whileIdle(): Promise<{ exit?: string; conversation: Message[] }> {
    const messages = await this.take();
    const held = this.shutdownRequest;
    const shutdown = held && this.undecided(held) ? held : messages.find((m) => m.type === 'shutdown_request');
    if (shutdown) {
      await this.putBack(messages.filter((m) => m.type !== 'shutdown_request'));
      return { exit: await this.approveShutdown(shutdown), conversation: [] };
    }
    this.hold(messages.filter((m) => m.type === 'answer'));
    // A cancel's notice is about a task already left: nothing to talk about (a model call for nothing).
    return { conversation: messages.filter((m) => !['answer', 'plan_approval_response', 'shutdown_response'].includes(m.type) && !isCancelNotice(m)) };
  }

  /**
   * Between two model turns of a task: a shutdown request the model left undecided for a turn is
   * approved (`exit`); new messages, and a new shutdown request, become a note for the model
   * (`inject`). Answers and plan decisions are held for the tool that waits for them. A cancel's
   * notice reaches the model only while it works on the task cancelled (`current`): one that arrives
   * after the teammate moved on would tell its model to stop the next task.
   */
  async betweenTurns(current: number | null): Promise<{ exit?: string; inject?: string; shutdownRequest?: string }> {
    const held = this.shutdownRequest;
    if (held) {
      if (this.undecided(held)) return { exit: await this.approveShutdown(held) };
      this.shutdownRequest = null; // answered (declined) by the model
    }
    const inbox = await this.take();
    const shutdown = inbox.find((m) => m.type === 'shutdown_request');
    if (shutdown) this.shutdownRequest = shutdown;
    const awaited = (m: Message) => m.type === 'answer' || m.type === 'plan_approval_response';
    this.hold(inbox.filter(awaited));
    const rest = inbox.filter((m) => m.type !== 'shutdown_request' && !awaited(m) && !(isCancelNotice(m) && m.task !== current));
    const notes = rest.length ? [`New messages:\n${formatMessages(rest)}`] : [];
    if (shutdown) notes.push(`The lead asks you to shut down (request_id: ${String(shutdown.requestId)}). Answer with shutdown_response.`);
    if (!notes.length) return {};
    return { inject: notes.join('\n\n'), ...(shutdown ? { shutdownRequest: String(shutdown.requestId) } : {}) };
  }

  /** Keeps messages for a later waitFor (an answer that arrived while the teammate was idle). */
  hold(messages: readonly Message[]): void {
    this.pending.push(...messages);
  }

  /** Still undecided; a request without a stored record (sent by hand) counts as undecided. */
  undecided(request: Message): boolean {
    if (typeof request.requestId !== 'string') return true;
    try {
      return this.requests.get(request.requestId).status === 'pending';
    } catch {
      return true;
    }
  }

  /** Approves a shutdown request on the teammate's behalf; returns the exit reason. */
  async approveShutdown(request: Message): Promise<string> {
    const id = String(request.requestId ?? '');
    try {
      await this.requests.resolve(id, true, 'approved by runtime');
    } catch {
      // A request without a stored record (sent by hand) is still honoured.
    }
    await this.mailbox.send(this.name, request.from, 'shutting down', 'shutdown_response', { requestId: id, approve: true }).catch(() => undefined);
    this.shutdownRequest = null;
    return `shutdown requested by ${request.from}`;
  }

  /** Puts messages back in the inbox (and anything held back) so none is lost when the teammate stops. */
  async putBack(messages: readonly Message[] = []): Promise<void> {
    await this.mailbox.restore(this.name, [...messages, ...this.pending.splice(0)]).catch(() => undefined);
  }
}

/** The notice a pipeline's cancel sends the owner of a task it cancelled (PipelineNotices.stop). */
function isCancelNotice(message: Message): boolean {
  return message.type === 'message' && message.cancelled === true;
}

import type { Mailbox } from '../board/mailbox.js';
import type { MemberStatus, Message, Task } from '../board/schemas.js';
import type { TaskBoardLike } from '../board/task-rules.js';
import { AutoteamError, serializeError } from '../errors.js';
import { isOpen } from '../stages/pipeline-status.js';
import type { EventSink } from '../events/emitter.js';
import type { TeamEvent } from '../events/schema.js';
import { type PendingQuestion, questionOf } from './questions.js';
import type { LeadEvent } from './session-types.js';
import type { Answerer } from './simulated-user.js';

/** A question of a task, as asked: the same words about the same task are the same question, whoever asks. */
function answerKey(question: Pick<PendingQuestion, 'task' | 'question'>): string {
  return `${question.task}\u0000${question.question}`;
}

/** How far apart the asker's clock and the board's may be and one ask still be told from its list entry. */
const SAME_ASK_MS = 5_000;

/**
 * The teammates' questions waiting for the person (or the simulated user). A question follows its
 * task's claim: once the task is cancelled, failed or completed, or its asker no longer holds it (it
 * died and the task was handed back, or another took it over), nobody waits for the answer
 * (whoever works the task next asks afresh), so it is withdrawn — from the list, the question box,
 * /inbox — and an answer always goes to a live question.
 */
export class QuestionDesk {
  private readonly questions = new Map<string, PendingQuestion>();
  /** Questions whose task had closed when their message came: withdrawn then, and only then. */
  private readonly withdrawnOnArrival = new Set<string>();
  private answerer: Answerer | null = null;

  constructor(
    private readonly deps: {
      board: TaskBoardLike;
      mailbox: Mailbox;
      sink: EventSink;
      lead: () => string;
      /** A member's status in the team's config (undefined: not listed). */
      memberStatus: (name: string) => MemberStatus | undefined;
      auto: () => boolean;
      emit: (event: LeadEvent) => void;
    },
  ) {}

  /**
   * Who answers when auto answers are on, and the questions the board shows pending to take up (those
   * it shows unanswered, less any answered while no lead ran: questionsInLog). `leftByLastLead` says
   * which the last lead left; the others were asked as this session started, and its log shows them.
   */
  open(answerer: Answerer, pending: readonly PendingQuestion[], leftByLastLead: (question: PendingQuestion) => boolean = () => true): void {
    this.answerer = answerer;
    // Taken from their messages before there was anyone to answer them: answered now.
    if (this.deps.auto()) for (const question of this.questions.values()) void this.autoReply(question);
    for (const question of pending) {
      // Taken from its message while this session started: one question, not a second one left by
      // the last lead (it was shown twice, and the simulated user answered it twice).
      if (this.questions.has(question.questionId) || this.answeredBefore(question, null)) continue;
      this.questions.set(question.questionId, question);
      // Asked as this session started, before its message was read: the log shows it being asked.
      this.deps.emit({ type: 'question', question, ...(leftByLastLead(question) ? { resumed: true } : {}) });
      if (this.deps.auto()) void this.autoReply(question);
    }
  }

  /**
   * Questions this desk answered: the ask (its message, when it came as one) and when it was asked.
   * Its message read after the answer, or the board showing it again, is the same ask, not a new
   * question. The same question asked again later (its asker took the task over, the answer lost
   * with the work before it) comes as another message: a new question — it had been taken for the
   * old one, never shown, and the pipeline stalled.
   */
  private readonly answeredHere = new Map<string, { message: string | null; at: number }>();
  /** The message each question waiting here came in (none: taken from the board's list). */
  private readonly messageOf = new WeakMap<PendingQuestion, string>();
  /**
   * What this desk answered to each question of a task (by task and question), and who answered. The
   * same question of the same task asked again — by whoever works the task now, the answer lost with
   * an asker that died before it read it, or with the work before a takeover — gets the same answer
   * at once: the person answered it, and an input line meant for the next question is not taken for it.
   */
  private readonly answersGiven = new Map<string, { text: string; by: 'person' | 'simulated user' }>();

  /**
   * `question` (from message `message`, or the board's list) is an ask this desk answered. Where one
   * side has no message, by time: the asker stamps its message, the board its list, and a clock
   * apart by up to SAME_ASK_MS does not make the same ask a new one.
   */
  private answeredBefore(question: PendingQuestion, message: string | null): boolean {
    const answered = this.answeredHere.get(question.questionId);
    if (!answered) return false;
    if (message !== null && answered.message !== null) return message === answered.message;
    return !(Date.parse(question.at) > answered.at + SAME_ASK_MS);
  }

  /** Questions waiting, oldest first; none of a task that is no longer open. */
  pending(): PendingQuestion[] {
    this.withdrawStale();
    return [...this.questions.values()];
  }

  /** A `question` message from a teammate. */
  asked(message: Message): void {
    const question = questionOf(message);
    // Asked again after a restart, or its message read after the board showed it pending: already
    // pending (or answered here), not a new question.
    if (this.questions.has(question.questionId) || this.answeredBefore(question, message.id)) return;
    // Its answer already recorded by its asker (answered elsewhere, the message read late): not shown.
    if (this.recordedAnswer(question)) return;
    // Asked just before its task was cancelled (the cancel came before the message): nobody will read
    // the answer, and the log, which says it was asked, says it is withdrawn. Once, however often the
    // message comes.
    const stale = this.whyStale(question);
    if (stale) {
      if (!this.withdrawnOnArrival.has(question.questionId)) this.withdraw(question, stale);
      this.withdrawnOnArrival.add(question.questionId);
      return;
    }
    this.questions.set(question.questionId, question);
    this.messageOf.set(question, message.id);
    this.deps.emit({ type: 'question', question });
    const given = this.answersGiven.get(answerKey(question));
    if (given) void this.answer(given.text, question.questionId, given.by).catch((error: unknown) => this.deps.emit({ type: 'error', ...serializeError(error) }));
    else if (this.deps.auto()) void this.autoReply(question);
  }

  /** Answers a pending question (the oldest when no id is given). */
  async answer(text: string, questionId?: string, by: 'person' | 'simulated user' = 'person'): Promise<PendingQuestion> {
    // An answer goes to a live question only, never to a cancelled or finished task.
    this.withdrawStale();
    const question = questionId ? this.questions.get(questionId) : this.questions.values().next().value;
    if (!question) throw new AutoteamError(questionId ? `no pending question '${questionId}'` : 'no question is waiting for an answer', 'NO_QUESTION');
    // An answer that cannot reach its asker (a team config broken by hand, a folder in its inbox's
    // place) is refused before anything is recorded: the question stays, to be answered once mended.
    this.deps.mailbox.deliverable(question.from);
    this.questions.delete(question.questionId);
    // Answered from now: its message, read while the answer is on its way, is not a new question.
    this.answeredHere.set(question.questionId, { message: this.messageOf.get(question) ?? null, at: Date.parse(question.at) });
    const lead = this.deps.lead();
    // In the log before the asker can read the answer: what it does next comes after it there too.
    this.deps.sink.emit({ type: 'question_answered', pipeline: question.pipeline, task: question.task, agent: lead, questionId: question.questionId, answer: text, by, asker: question.from });
    await this.deps.sink.flush();
    try {
      await this.deps.mailbox.send(lead, question.from, text, 'answer', { questionId: question.questionId, task: question.task, answeredBy: by });
    } catch (error) {
      // The log said it was answered: it says too that the answer never reached the asker, and the
      // question waits again, to be answered once the board is mended.
      this.answeredHere.delete(question.questionId);
      this.questions.set(question.questionId, question);
      this.deps.sink.emit({ type: 'question_withdrawn', pipeline: question.pipeline, task: question.task, agent: question.from, questionId: question.questionId, reason: `the answer could not be delivered: ${serializeError(error).message}` });
      throw error;
    }
    if (question.task !== null) this.answersGiven.set(answerKey(question), { text, by });
    this.deps.emit({ type: 'answered', question, answer: text, by });
    return question;
  }

  /**
   * The log says a question was answered: by this desk (already gone), from another front end on the
   * board (the web board, the MCP server), or by the asker's own timeout. Nobody waits for it here.
   */
  answeredElsewhere(questionId: string, answer: string, by: string): void {
    const question = this.questions.get(questionId);
    if (!question) return;
    this.questions.delete(questionId);
    this.droppedElsewhere.set(questionId, question);
    this.settled(question, answer, by);
  }

  /** Questions an answer from elsewhere took away: one whose answer then could not be delivered comes back. */
  private readonly droppedElsewhere = new Map<string, PendingQuestion>();

  /** What the log says of questions: answered elsewhere, or (after such an answer) its delivery failed. */
  heard(event: TeamEvent): void {
    if (event.type === 'question_answered') this.answeredElsewhere(event.questionId, event.answer, event.by);
    if (event.type !== 'question_withdrawn') return;
    const question = this.droppedElsewhere.get(event.questionId);
    this.droppedElsewhere.delete(event.questionId);
    if (!question || this.questions.has(question.questionId) || this.whyStale(question) || this.recordedAnswer(question)) return;
    this.questions.set(question.questionId, question);
    this.deps.emit({ type: 'question', question });
  }

  /** Tells what became of a question settled elsewhere: answered, or its asker stopped waiting. */
  private settled(question: PendingQuestion, answer: string, by: string): void {
    if (by === 'timeout') this.deps.emit({ type: 'question_withdrawn', question, reason: `${question.from} stopped waiting for an answer` });
    else this.deps.emit({ type: 'answered', question, answer, by: by === 'simulated user' ? 'simulated user' : 'person' });
  }

  /** Auto answers were turned on: what is waiting is answered now. */
  answerAll(): void {
    for (const question of this.pending()) void this.autoReply(question);
  }

  /** Withdraws every question whose task is closed (checked on board events and before every read). */
  withdrawStale(): void {
    for (const question of [...this.questions.values()]) {
      // Answered from another front end, and its asker recorded the answer before this desk read the
      // log's word of it: answered, not withdrawn (the log's question_answered line says it).
      const recorded = this.recordedAnswer(question);
      if (recorded) {
        this.questions.delete(question.questionId);
        this.settled(question, recorded.answer, recorded.by);
        continue;
      }
      const reason = this.whyStale(question);
      if (reason) this.withdraw(question, reason);
    }
  }

  /** The answer the asker's task records to `question` (its id `q-<task>-<n>`: the task's n-th answer), or null. */
  private recordedAnswer(question: PendingQuestion): { answer: string; by: string } | null {
    const n = new RegExp(`^q-${question.task}-(\\d+)$`).exec(question.questionId)?.[1];
    if (question.task === null || n === undefined) return null;
    try {
      return this.deps.board.get(question.task).artifacts.qa?.[Number(n) - 1] ?? null;
    } catch {
      return null;
    }
  }

  /** Withdraws the questions of `pipeline`, whose open tasks the person's cancel is about to close. */
  withdrawCancelled(pipeline: number): void {
    for (const question of [...this.questions.values()]) if (question.pipeline === pipeline && question.task !== null) this.withdraw(question, `task #${question.task} is cancelled`);
  }

  private withdraw(question: PendingQuestion, reason: string): void {
    this.questions.delete(question.questionId);
    this.deps.sink.emit({ type: 'question_withdrawn', pipeline: question.pipeline, task: question.task, agent: question.from, questionId: question.questionId, reason });
    this.deps.emit({ type: 'question_withdrawn', question, reason });
  }

  /** Why nobody waits for the answer to `question` any more, or null. */
  private whyStale(question: PendingQuestion): string | null {
    if (question.task === null) return null;
    let task: Task;
    try {
      task = this.deps.board.get(question.task);
    } catch {
      // Not seen yet (a database board's replica lags another host's write) is not closed.
      return null;
    }
    if (!isOpen(task)) return `task #${task.id} is ${task.status}`;
    // Its asker no longer holds the task: the answer would wait in a dead member's inbox, and whoever
    // takes the task next asks afresh. Taken by another, or handed back when its asker died.
    if (task.status === 'in_progress' && task.owner && task.owner !== question.from) return `task #${task.id} is ${task.owner}'s now`;
    // Dead, not shut down: a session that quit in the middle of a question left its teammates shut
    // down, and the same names ask again when it starts again (the answer waits in their inboxes).
    if (task.status !== 'in_progress' && this.deps.memberStatus(question.from) === 'dead') return `${question.from} is dead and task #${task.id} was handed back`;
    return null;
  }

  private async autoReply(question: PendingQuestion): Promise<void> {
    if (!this.answerer) return;
    try {
      const reply = await this.answerer.answer(question);
      if (this.questions.has(question.questionId)) await this.answer(reply, question.questionId, 'simulated user');
    } catch (error) {
      const { code, message } = serializeError(error);
      this.deps.emit({ type: 'error', code, message: `simulated user: ${message}` });
    }
  }
}

import type { LeadApi, PendingQuestion } from '../core/lead/session.js';
import { BARE_PIPELINE, TO_PIPELINE } from '../frontend/answer.js';

/**
 * `run`'s answers from standard input. A line `#N text` answers pipeline N's question (held until
 * that pipeline asks); any other line, and one naming no pipeline of this run, answers the question
 * in front of the run, oldest first. Until every requirement is posted, any `#N` may be one of this
 * run's: held, not sent as typed. A pipeline at work on the board before the run (its question left
 * waiting by an earlier session, say) is not this run's: only a `#N` line answers its questions, and
 * how is said once, under its first.
 */
export class StdinAnswers {
  /** Lines typed and not used yet, oldest first. */
  readonly typed: string[] = [];
  /** This run's pipelines, in the order of its requirements (posted once the team has started). */
  readonly pipelines: number[] = [];
  /** Set once every requirement is posted: a `#N` naming none of them is then a plain answer. */
  allPosted = false;
  private readonly older = new Set<number>();
  private readonly hinted = new Set<number>();

  constructor(
    private readonly session: Pick<LeadApi, 'answer' | 'pendingQuestions'>,
    private readonly log: (line: string) => void,
  ) {}

  /** Pipelines at work on the board as the run began. */
  atWorkBefore(ids: Iterable<number>): void {
    for (const id of ids) this.older.add(id);
  }

  /** Whether `pipeline` was at work before the run (not the run's own). */
  isOlder(pipeline: number | null): boolean {
    return pipeline !== null && this.older.has(pipeline);
  }

  /** A line of standard input: held, then given to the questions waiting that it answers. */
  typedLine(line: string): void {
    // `#N` alone says nothing: not an answer of two characters to whichever question comes.
    const bare = BARE_PIPELINE.exec(line.trim());
    if (bare) {
      this.log(`note: '#${bare[1]}' alone is no answer (#${bare[1]} <answer>): the line is skipped`);
      return;
    }
    this.typed.push(line);
    for (const question of this.session.pendingQuestions()) this.answer(question);
  }

  /**
   * A question came (`resumed`: one an earlier session left waiting): answered with the line held for
   * it, if there is one; false when none is.
   */
  asked(question: PendingQuestion, resumed = false): boolean {
    const { pipeline } = question;
    if (pipeline !== null && (resumed || this.older.has(pipeline)) && !this.hinted.has(pipeline)) {
      this.older.add(pipeline);
      this.hinted.add(pipeline);
      this.log(`  a line '#${pipeline} <answer>' on standard input answers it; other lines answer this run's questions`);
    }
    return this.answer(question);
  }

  private answer(question: PendingQuestion): boolean {
    const own = this.typed.findIndex((line) => this.addressedTo(line)?.pipeline === question.pipeline);
    const at = own >= 0 ? own : this.isOlder(question.pipeline) ? -1 : this.typed.findIndex((line) => this.addressedTo(line) === null);
    if (at < 0) return false;
    const line = this.typed.splice(at, 1)[0]!;
    const addressed = this.addressedTo(line);
    const named = addressed ? null : TO_PIPELINE.exec(line)?.[1];
    if (named) this.log(`note: #${named} names no pipeline of this run (${this.pipelines.map((id) => `#${id}`).join(', ')}): the whole line, as typed, answers pipeline #${question.pipeline}'s question`);
    void this.session.answer(addressed?.text ?? line, question.questionId).catch(() => undefined);
    return true;
  }

  private addressedTo(line: string): { pipeline: number; text: string } | null {
    const to = TO_PIPELINE.exec(line);
    const pipeline = Number(to?.[1]);
    return to && (!this.allPosted || this.pipelines.includes(pipeline) || this.older.has(pipeline)) ? { pipeline, text: to[2]! } : null;
  }
}

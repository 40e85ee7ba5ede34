import { AutoteamError } from '../core/errors.js';
import type { LeadApi } from '../core/lead/lead-api.js';
import type { PendingQuestion } from '../core/lead/questions.js';

/** A line that names a pipeline: `#N`, `#N:`, then the answer (or nothing, which answers nothing). */
export const ADDRESSED = /^#\d+:?(\s|$)/;
/** `#N` (or `#N:`) with nothing after it. */
export const BARE_PIPELINE = /^#(\d+):?$/;
/** `#N <answer>` (or `#N: <answer>`): the pipeline and the answer. */
export const TO_PIPELINE = /^#(\d+):?\s+(\S[\s\S]*)$/;

/**
 * A typed answer: `#N text` answers pipeline N's question, as a line of `run`'s standard input does;
 * anything else the question in front (the oldest) — or, when the REPL knows it (`begunFor`), the one
 * that was in front when the person began typing the line. One naming a pipeline with no question
 * waiting is not sent: it would answer another pipeline's question with words meant for N; nor is one
 * begun for a question that went away meanwhile (cancelled, answered elsewhere): the next question in
 * front is another pipeline's, and the words were not meant for it.
 */
export async function answerTyped(io: { session: Pick<LeadApi, 'answer' | 'pendingQuestions'> }, text: string, begunFor?: PendingQuestion): Promise<void> {
  // `#N` alone names a pipeline and says nothing: not an answer of two characters to whichever question is in front.
  const bare = BARE_PIPELINE.exec(text.trim());
  if (bare) throw new AutoteamError(`#${bare[1]} needs the answer after it: #${bare[1]} <answer>; nothing was sent`, 'USAGE');
  const to = TO_PIPELINE.exec(text.trim());
  if (!to) {
    if (begunFor && !io.session.pendingQuestions().some((question) => question.questionId === begunFor.questionId)) {
      const whose = `${begunFor.from}'s question${begunFor.pipeline != null ? ` (pipeline #${begunFor.pipeline})` : ''}`;
      throw new AutoteamError(`${whose} went away while you typed (answered elsewhere, or its task ended): nothing was sent (↑ brings the line back)`, 'NO_QUESTION');
    }
    await io.session.answer(text, begunFor?.questionId);
    return;
  }
  const pending = io.session.pendingQuestions();
  const question = pending.find((candidate) => candidate.pipeline === Number(to[1]));
  if (!question && pending.length === 0) throw new AutoteamError(`no question is waiting for an answer: nothing was sent (a requirement that starts with #${to[1]} goes on the board with /post)`, 'NO_QUESTION');
  if (!question) {
    const waiting = pending.map((candidate) => (candidate.pipeline != null ? `#${candidate.pipeline}` : `task #${candidate.task}`)).join(', ');
    throw new AutoteamError(`pipeline #${to[1]} has no question waiting (${waiting} ${pending.length === 1 ? 'has' : 'have'} one): the answer was not sent`, 'NO_QUESTION');
  }
  await io.session.answer(to[2]!, question.questionId);
}

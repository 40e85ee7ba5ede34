import { z } from 'zod';
import type { Message } from '../board/schemas.js';
import { defineTool, reportStatus, settingsOf, toolError } from './tool.js';

export type { QaEntry } from '../board/artifacts.js';

const waitedMs = (since: number) => Date.now() - since;

const normalize = (text: string) => text.toLowerCase().replace(/[^a-z0-9]+/g, ' ').trim();
const sameQuestion = (a: string, b: string) => normalize(a) === normalize(b);

/** How many refused questions past the limit end the pipeline (the experiment's model asked 21). */
const REFUSALS_BEFORE_FAILING = 2;

export const askClarifyingQuestionTool = defineTool({
  name: 'ask_clarifying_question',
  description:
    'Ask the person one clarifying question about the requirement and wait for the answer. Ask only what you cannot reasonably assume; there is a small limit per task.',
  inputSchema: z.object({ question: z.string().min(3).describe('one question') }),
  async run({ question }, ctx) {
    if (!ctx.task || !ctx.fence) return toolError('no requirements task is claimed');
    const { maxQuestions, answerTimeoutMs } = settingsOf(ctx);
    const current = ctx.board.get(ctx.task.id);
    const qa = current.artifacts.qa ?? [];
    if (qa.length >= maxQuestions) {
      const refused = (current.artifacts.questionsRefused ?? 0) + 1;
      await ctx.record('question_refused', question, () => ({ questionsRefused: refused }));
      if (refused > REFUSALS_BEFORE_FAILING) {
        return {
          content: 'Too many questions past the limit; the pipeline is stopped.',
          isError: true,
          signal: { kind: 'fail', reason: `max clarifying questions (${maxQuestions}) exceeded` },
        };
      }
      return toolError(
        `Question limit (${maxQuestions}) reached. Do not ask more: record what you know with save_requirement, assume sensible defaults, and call complete_requirements_analysis.`,
      );
    }
    // Asked and answered before (a restart after the answer): the board has it, the person is not asked again.
    const known = qa.find((entry) => sameQuestion(entry.question, question));
    if (known) return { content: known.answer };
    const questionId = `q-${ctx.task.id}-${qa.length + 1}`;
    const isAnswer = (m: Message) => m.type === 'answer' && m.questionId === questionId;
    // Answered while no one was waiting (the question was asked before a restart, the answer came after).
    let reply = await ctx.waitForMessage(isAnswer, 0);
    const started = Date.now();
    if (!reply) {
      const lead = ctx.registry.read().lead;
      // Not asked at all where it cannot be sent (a folder in the lead's inbox's place): no question
      // is shown that nobody can answer. The event first: the message is sent once it is in the
      // board's log, so the answer comes after it there.
      ctx.mailbox.deliverable(lead);
      ctx.emit?.({ type: 'question_asked', questionId, question });
      await ctx.mailbox.send(ctx.agent.name, lead, question, 'question', { questionId, task: ctx.task.id, pipeline: ctx.task.pipeline });
      await ctx.record('asked', question);
      await reportStatus(ctx, 'waiting', 'waiting for an answer');
      reply = await ctx.waitForMessage(isAnswer, answerTimeoutMs);
      await reportStatus(ctx, 'working');
    }
    // Stopped while waiting (the team stopping, the task cancelled or taken over): nothing is recorded,
    // so the question is asked again when the work resumes.
    if (!reply && (ctx.signal.aborted || waitedMs(started) < answerTimeoutMs)) return { content: 'No answer: the work on this task was stopped.' };
    const answer = reply?.content ?? `No answer within ${Math.round(answerTimeoutMs / 1000)} s; proceed with sensible assumptions.`;
    // Who answered, as the lead's message says (the person, or the simulated user); else its sender.
    const by = !reply ? 'timeout' : reply.answeredBy === 'person' || reply.answeredBy === 'simulated user' ? reply.answeredBy : reply.from;
    // The lead tells who answered (the person, or the simulated user); nobody did when it timed out.
    if (!reply) ctx.emit?.({ type: 'question_answered', questionId, answer, by, asker: ctx.agent.name });
    await ctx.record('answered', `${by}: ${answer}`, (artifacts) => ({
      qa: [...(artifacts.qa ?? []), { question, answer, by }],
    }));
    return { content: answer };
  },
});

import type { TaskBoardLike as TaskBoard } from '../board/task-rules.js';
import { normalizeQuestion, playbookAnswer } from '../model/scripted/playbook.js';
import type { ModelClient } from '../model/types.js';
import type { PriceTable } from '../model/pricing.js';
import type { QaEntry } from '../board/artifacts.js';
import type { EventSink } from '../events/emitter.js';
import { tellModelCall } from '../agent/model-call-event.js';

export interface Answerer {
  answer(question: { question: string; task: number | null; pipeline: number | null }): Promise<string>;
}

const REPEATED = 'You already asked that. Please proceed with what you have and assume sensible defaults.';

/**
 * The simulated user behind `--auto`. Offline: a keyword playbook. With a real model: the lead model
 * answers as the person who wrote the requirement, assuming sensible defaults. Either way a repeated
 * question is told to proceed. A model's answer is spent like any call: a `model_call` event
 * (`simulated_user`), and the question's task carries its tokens, so its pipeline's totals and budgets count it.
 */
export function createAnswerer(model: ModelClient, board: TaskBoard, events?: EventSink, prices?: PriceTable): Answerer {
  const context = (task: number | null) => {
    if (task === null) return { requirement: '', previous: [] as QaEntry[], pipeline: null };
    try {
      const current = board.get(task);
      return { requirement: current.artifacts.requirement ?? current.description, previous: current.artifacts.qa ?? [], pipeline: current.pipeline };
    } catch {
      return { requirement: '', previous: [] as QaEntry[], pipeline: null };
    }
  };
  return {
    async answer({ question, task }) {
      const { requirement, previous, pipeline } = context(task);
      if (previous.some((entry) => normalizeQuestion(entry.question) === normalizeQuestion(question))) return REPEATED;
      if (model.id === 'offline-scripted') return playbookAnswer(question, previous.map((entry) => entry.question), requirement);
      const started = Date.now();
      const response = await model.create({
        system:
          'You are the person who asked a software team for a program. Answer the analyst\'s clarifying question in one or two sentences, consistent with your original requirement; where it says nothing, choose a sensible default. Never ask a question back.',
        messages: [
          {
            role: 'user',
            content: [
              `My original requirement: ${requirement || '(unknown)'}`,
              previous.length ? `Already answered:\n${previous.map((e) => `Q: ${e.question}\nA: ${e.answer}`).join('\n')}` : '',
              `The analyst asks: ${question}`,
            ]
              .filter(Boolean)
              .join('\n\n'),
          },
        ],
        tools: [],
        maxTokens: 300,
        agent: { name: 'simulated-user', role: 'user', stage: null, purpose: 'simulated_user', task },
      });
      const text = response.content
        .filter((block) => block.type === 'text')
        .map((block) => block.text)
        .join(' ')
        .trim();
      tellModelCall({ model, response, latencyMs: Date.now() - started, text: '', purpose: 'simulated_user', ...(prices ? { prices } : {}) }, { agent: 'simulated-user', role: 'user', stage: null, task, pipeline }, { ...(events ? { events } : {}) });
      if (task !== null) {
        board.recordUsage(task, response.usage);
        await board.flushUsage(task).catch(() => undefined);
      }
      return text || 'Use sensible defaults.';
    },
  };
}

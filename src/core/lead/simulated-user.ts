import type { TaskBoardLike as TaskBoard } from '../board/task-rules.js';
import { normalizeQuestion, playbookAnswer } from '../model/scripted/playbook.js';
import type { ModelClient } from '../model/types.js';
import type { QaEntry } from '../board/artifacts.js';

export interface Answerer {
  answer(question: { question: string; task: number | null; pipeline: number | null }): Promise<string>;
}

const REPEATED = 'You already asked that. Please proceed with what you have and assume sensible defaults.';

/**
 * The simulated user behind `--auto`. Offline: a keyword playbook. With a real model: the lead model
 * answers as the person who wrote the requirement, assuming sensible defaults. Either way a repeated
 * question is told to proceed.
 */
export function createAnswerer(model: ModelClient, board: TaskBoard): Answerer {
  const context = (task: number | null) => {
    if (task === null) return { requirement: '', previous: [] as QaEntry[] };
    try {
      const current = board.get(task);
      return { requirement: current.artifacts.requirement ?? current.description, previous: current.artifacts.qa ?? [] };
    } catch {
      return { requirement: '', previous: [] as QaEntry[] };
    }
  };
  return {
    async answer({ question, task }) {
      const { requirement, previous } = context(task);
      if (previous.some((entry) => normalizeQuestion(entry.question) === normalizeQuestion(question))) return REPEATED;
      if (model.id === 'offline-scripted') return playbookAnswer(question, previous.map((entry) => entry.question), requirement);
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
      return text || 'Use sensible defaults.';
    },
  };
}

/** `run`'s answers from standard input (StdinAnswers), against a LeadApi slice that records answers. */
import { describe, expect, it } from 'vitest';
import { StdinAnswers } from '../../src/cli/run-answers.js';
import type { PendingQuestion } from '../../src/core/lead/questions.js';

function session(questions: PendingQuestion[]) {
  const answers: Array<{ text: string; questionId?: string }> = [];
  return {
    answers,
    api: {
      pendingQuestions: () => questions.filter((question) => !answers.some((answer) => answer.questionId === question.questionId)),
      answer: async (text: string, questionId?: string) => {
        answers.push({ text, ...(questionId ? { questionId } : {}) });
        return questions.find((question) => question.questionId === questionId)!;
      },
    },
  };
}

const question = (pipeline: number): PendingQuestion => ({ questionId: `q-${pipeline}`, from: 'analyst', question: 'Which types?', task: pipeline, pipeline, at: new Date(0).toISOString() });

describe("run's answers from standard input", () => {
  it("a line '#N' alone is skipped with a note, never sent as the answer to the question in front", () => {
    const fake = session([question(1)]);
    const said: string[] = [];
    const answers = new StdinAnswers(fake.api, (line) => said.push(line));
    answers.pipelines.push(1);
    answers.allPosted = true;
    answers.typedLine('#1');
    answers.typedLine('  #7  ');
    expect(fake.answers).toEqual([]);
    expect(said).toEqual(["note: '#1' alone is no answer (#1 <answer>): the line is skipped", "note: '#7' alone is no answer (#7 <answer>): the line is skipped"]);
    answers.typedLine('#1 Images and Other');
    expect(fake.answers).toEqual([{ text: 'Images and Other', questionId: 'q-1' }]);
  });
});

/**
 * A question answered while no lead ran (the web board's `autoteam web` answers as the lead does):
 * the answer waits in the asker's inbox, and the next lead does not ask the person for it again.
 */
import { describe, expect, it } from 'vitest';
import { type Board, fileBoard } from '../../src/core/board/board.js';
import { BoardLead } from '../../src/core/lead/board-lead.js';
import { sessionsOnTempBoards, waitUntil } from '../helpers/repl-session.js';

const made = sessionsOnTempBoards('autoteam-answered-without-lead-');
const REQUIREMENT = 'Write a Python script that counts the words in a text file.';
const ANSWER = 'A file path given on the command line.';

/** A board whose pipeline #1 has a question the last lead left pending: its analyst asked, and the lead quit. */
async function pendingQuestion(): Promise<string> {
  const root = made.board();
  const first = made.session({ rootDir: root, model: { kind: 'offline', reason: 'test' }, repo: false, settings: { pollMs: 100 } });
  await first.start([{ name: 'analyst', role: 'analyst' }]);
  await first.post(REQUIREMENT);
  await waitUntil(() => first.pendingQuestions()[0] ?? null, "the analyst's question");
  await first.close(1_000);
  return root;
}

/** `then` with the board open under a BoardLead, as `autoteam web` has it, no lead running. */
async function withoutLead(root: string, then: (web: BoardLead, board: Board) => Promise<void>): Promise<void> {
  const board = fileBoard(root);
  const web = new BoardLead(board);
  try {
    await web.start();
    await then(web, board);
  } finally {
    await web.close();
    await board.close();
  }
}

/** What the next lead to start on `root` puts to the person. */
async function nextLeadAsks(root: string) {
  const next = made.session({ rootDir: root, model: { kind: 'offline', reason: 'test' }, repo: false });
  await next.start([]);
  return next.pendingQuestions();
}

describe('a question answered while no lead ran', () => {
  it("is not put to the person again by the next lead; the answer waits in the asker's inbox", async () => {
    const root = await pendingQuestion();
    await withoutLead(root, async (web) => {
      expect(web.pendingQuestions().map((question) => question.questionId)).toEqual(['q-1-1']);
      await web.answer(ANSWER, 'q-1-1');
    });
    expect(await nextLeadAsks(root)).toEqual([]);
    // A web board started again (no lead ran since) does not list it either.
    await withoutLead(root, async (web, board) => {
      expect(web.pendingQuestions()).toEqual([]);
      expect(board.mailbox.peek('analyst')).toEqual([expect.objectContaining({ type: 'answer', content: ANSWER, questionId: 'q-1-1' })]);
    });
  });

  it('one asked again under its id after that answer (another attempt at the task) is put to the person again', async () => {
    const root = await pendingQuestion();
    await withoutLead(root, async (web, board) => {
      await web.answer(ANSWER, 'q-1-1');
      await board.sink.flush();
      await board.log.append([{ type: 'question_asked', ts: new Date().toISOString(), team: board.registry.read().team, pipeline: 1, task: 1, agent: 'analyst', questionId: 'q-1-1', question: 'Which file should it read?' }]);
    });
    await withoutLead(root, async (web) => expect(web.pendingQuestions().map((question) => question.questionId)).toEqual(['q-1-1']));
    expect(await nextLeadAsks(root)).toEqual([expect.objectContaining({ questionId: 'q-1-1', from: 'analyst', task: 1 })]);
  });

  it('one nobody answered is still put to the person', async () => {
    const root = await pendingQuestion();
    expect(await nextLeadAsks(root)).toEqual([expect.objectContaining({ questionId: 'q-1-1', from: 'analyst', task: 1 })]);
  });
});

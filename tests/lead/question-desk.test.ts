/**
 * The lead's desk of questions: a question taken from its message while the session started is not
 * taken again from the board's pending ones (it was shown twice, "still waiting from the last
 * session", and the simulated user answered it twice); one asked again after its answer is a new question.
 */
import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { fileBoard } from '../../src/core/board/board.js';
import type { Message } from '../../src/core/board/schemas.js';
import { QuestionDesk } from '../../src/core/lead/question-desk.js';
import { noteAnswer, type PendingQuestion } from '../../src/core/lead/questions.js';
import type { LeadEvent } from '../../src/core/lead/session-types.js';
import { tempBoard, until } from '../helpers/agent-wait.js';

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) fs.rmSync(root, { recursive: true, force: true });
});

describe('QuestionDesk', () => {
  /** A desk on a fresh board whose task #1 `a2` holds, answering on its own; what it said and answered. */
  async function deskWithQuestion() {
    const root = tempBoard('autoteam-desk-');
    roots.push(root);
    const board = fileBoard(root);
    await board.registry.ensure('t', 'lead');
    await board.registry.join('a2', 'analyst');
    const task = await board.tasks.create({ subject: 'Requirements: count words', role: 'analyst', by: 'lead' });
    expect((await board.tasks.claim(task.id, 'a2')).ok).toBe(true);
    const events: LeadEvent[] = [];
    const desk = new QuestionDesk({ board: board.tasks, mailbox: board.mailbox, sink: board.sink, lead: () => 'lead', memberStatus: () => 'working', auto: () => true, emit: (event) => events.push(event) });
    const message = { id: 'm1', from: 'a2', to: 'lead', type: 'question', content: 'Which file types?', at: new Date().toISOString(), questionId: 'q-1-1', task: task.id, pipeline: 1 } as unknown as Message;
    const pending: PendingQuestion = { questionId: 'q-1-1', from: 'a2', question: 'Which file types?', task: task.id, pipeline: 1, at: message.at };
    const answerer = { answer: async () => 'text files' };
    const shown = () => events.flatMap((event) => (event.type === 'question' ? [`${event.question.questionId}${event.resumed ? ' resumed' : ''}`] : []));
    const answers = async () => (await board.log.read({ types: ['question_answered'] })).map((event) => (event as { questionId: string }).questionId);
    return { desk, message, pending, answerer, shown, answers, events, board, task };
  }

  it('a question whose message came before the session opened is not taken again as left by the last lead, and is answered once', async () => {
    const { desk, message, pending, answerer, shown, answers, events } = await deskWithQuestion();
    desk.asked(message);
    desk.open(answerer, [pending, { ...pending, questionId: 'q-0-9', question: 'Left by the last lead?' }]);
    await until(() => events.filter((event) => event.type === 'answered').length === 2 || events.find((event) => event.type === 'error'), 'both answered');
    expect(events.filter((event) => event.type === 'error')).toEqual([]);
    expect(shown()).toEqual(['q-1-1', 'q-0-9 resumed']);
    expect((await answers()).sort()).toEqual(['q-0-9', 'q-1-1']);
  });

  it('a question asked as the session started is not shown as left by the last lead, and its message read while the answer is on its way is not a new question', async () => {
    const { desk, message, pending, shown, answers } = await deskWithQuestion();
    // Nobody answers on their own here: the person does, below.
    desk.open({ answer: () => new Promise<string>(() => {}) }, [pending], () => false);
    expect(shown()).toEqual(['q-1-1']);
    // The message is read while the answer is being logged and sent (answer() runs up to its first wait).
    const answering = desk.answer('text files', 'q-1-1');
    desk.asked(message);
    await answering;
    expect(shown()).toEqual(['q-1-1']);
    expect(desk.pending()).toEqual([]);
    expect(await answers()).toEqual(['q-1-1']);
  });

  it('a question the board showed pending, answered, and whose message comes after is not asked again', async () => {
    const { desk, message, pending, answerer, shown, answers, events } = await deskWithQuestion();
    desk.open(answerer, [pending]);
    await until(() => events.some((event) => event.type === 'answered'), 'answered');
    desk.asked(message);
    expect(shown()).toEqual(['q-1-1 resumed']);
    expect(desk.pending()).toEqual([]);
    expect(await answers()).toEqual(['q-1-1']);
  });

  it('the same question asked again after it was answered (the answer lost with the work before a takeover) is shown, and answered at once as before', async () => {
    const { desk, message, shown, answers, events } = await deskWithQuestion();
    desk.open({ answer: () => new Promise<string>(() => {}) }, []);
    desk.asked(message);
    await desk.answer('text files', 'q-1-1');
    // The asker took its task over again and asks the same question, under the same id, later.
    const again = { ...message, id: 'm2', at: new Date(Date.now() + 1_000).toISOString() } as Message;
    desk.asked(again);
    expect(shown()).toEqual(['q-1-1', 'q-1-1']);
    const said = () => events.flatMap((event) => (event.type === 'answered' ? [`${event.question.from}: ${event.answer} (${event.by})`] : []));
    await until(() => said().length === 2 || events.find((event) => event.type === 'error'), 'answered again');
    expect(said()).toEqual(['a2: text files (person)', 'a2: text files (person)']);
    expect(desk.pending()).toEqual([]);
    expect(await answers()).toEqual(['q-1-1', 'q-1-1']);
    // Told apart by the message, not by clocks: an asker whose clock is behind the lead's asks again.
    desk.asked({ ...message, id: 'm3', at: new Date(Date.now() - 3_000).toISOString() } as Message);
    expect(shown()).toEqual(['q-1-1', 'q-1-1', 'q-1-1']);
    await until(() => said().length === 3, 'answered a third time');
  });

  it('the same question of the same task from another asker (the first died before it read the answer) gets the answer given; another question waits for the person', async () => {
    const { desk, message, shown, events, board, task } = await deskWithQuestion();
    desk.open({ answer: () => new Promise<string>(() => {}) }, []);
    desk.asked(message);
    await desk.answer('text files', 'q-1-1');
    // a2 died before it read the answer; its task went back, and a3 took it.
    expect((await board.tasks.reclaimFrom(task.id, 'a2', 'a2 is dead')).ok).toBe(true);
    await board.registry.join('a3', 'analyst');
    expect((await board.tasks.claim(task.id, 'a3')).ok).toBe(true);
    const from = (name: string, id: string, questionId: string, content: string) => ({ ...message, id, from: name, questionId, content }) as unknown as Message;
    desk.asked(from('a3', 'm4', 'q-1-7', 'Which file types?'));
    const said = () => events.flatMap((event) => (event.type === 'answered' ? [`${event.question.from}: ${event.answer}`] : []));
    await until(() => said().length === 2 || events.find((event) => event.type === 'error'), 'answered for a3');
    expect(said()).toEqual(['a2: text files', 'a3: text files']);
    desk.asked(from('a3', 'm5', 'q-1-8', 'What about folders?'));
    expect(shown()).toEqual(['q-1-1', 'q-1-7', 'q-1-8']);
    expect(desk.pending().map((question) => question.questionId)).toEqual(['q-1-8']);
  });

  it('a question the board showed pending and the desk answered is the same ask when its message comes stamped by a clock ahead of the board', async () => {
    const { desk, message, pending, answerer, shown, answers, events } = await deskWithQuestion();
    desk.open(answerer, [pending]);
    await until(() => events.some((event) => event.type === 'answered'), 'answered');
    // The asker's machine runs 3 s ahead of the board's clock.
    desk.asked({ ...message, at: new Date(Date.parse(pending.at) + 3_000).toISOString() } as Message);
    expect(shown()).toEqual(['q-1-1 resumed']);
    expect(desk.pending()).toEqual([]);
    expect(await answers()).toEqual(['q-1-1']);
  });

  it('a question answered from another front end, whose asker recorded the answer and finished its task before the log said so here, is answered, never withdrawn', async () => {
    const { desk, message, events, board, task } = await deskWithQuestion();
    desk.open({ answer: () => new Promise<string>(() => {}) }, [], () => false);
    desk.asked(message);
    expect(desk.pending().map((question) => question.questionId)).toEqual(['q-1-1']);
    // The asker read the answer another front end sent, recorded it, and finished.
    await board.tasks.update(task.id, { artifacts: (current) => ({ ...current, qa: [{ question: 'Which file types?', answer: 'text files', by: 'person' }] }) }, { event: 'answered', detail: 'person: text files', by: 'a2' });
    await board.tasks.complete(task.id, 'a2', 'done');
    expect(desk.pending()).toEqual([]);
    expect(events.filter((event) => event.type === 'question_withdrawn')).toEqual([]);
    expect(events.filter((event) => event.type === 'answered')).toEqual([expect.objectContaining({ answer: 'text files', by: 'person', question: expect.objectContaining({ questionId: 'q-1-1' }) })]);
    expect(await board.log.read({ types: ['question_withdrawn'] })).toEqual([]);
    // Its message read again now: not shown anew.
    desk.asked({ ...message, id: 'm1-again' } as Message);
    expect(desk.pending()).toEqual([]);
    // A question of the task left unanswered when it closes is still withdrawn.
    const second = await board.tasks.create({ subject: 'Requirements: sort files', role: 'analyst', by: 'lead' });
    expect((await board.tasks.claim(second.id, 'a2')).ok).toBe(true);
    desk.asked({ ...message, id: 'm2', questionId: `q-${second.id}-1`, task: second.id, pipeline: 2 } as unknown as Message);
    await board.tasks.complete(second.id, 'a2', 'done');
    expect(desk.pending()).toEqual([]);
    expect(events.filter((event) => event.type === 'question_withdrawn').map((event) => (event as { reason: string }).reason)).toEqual([`task #${second.id} is completed`]);
  });

  it('a question answered elsewhere whose answer then could not be delivered is waiting again; the log keeps it open too', async () => {
    const { desk, message, events } = await deskWithQuestion();
    desk.open({ answer: () => new Promise<string>(() => {}) }, [], () => false);
    desk.asked(message);
    const about = { pipeline: 1, task: 1, questionId: 'q-1-1', ts: new Date().toISOString(), team: 't' };
    desk.heard({ ...about, type: 'question_answered', agent: 'lead', answer: 'text files', by: 'person', asker: 'a2' });
    expect(desk.pending()).toEqual([]);
    desk.heard({ ...about, type: 'question_withdrawn', agent: 'a2', reason: 'the answer could not be delivered: EISDIR' });
    expect(desk.pending().map((question) => question.questionId)).toEqual(['q-1-1']);
    expect(events.map((event) => event.type)).toEqual(['question', 'answered', 'question']);
    const answered = new Set<string>();
    noteAnswer(answered, { ...about, type: 'question_answered', agent: 'lead', answer: 'text files', by: 'person', asker: 'a2' });
    noteAnswer(answered, { ...about, type: 'question_withdrawn', agent: 'a2', reason: 'the answer could not be delivered: EISDIR' });
    expect([...answered]).toEqual([]);
  });

  it('an answer logged and then not delivered (the send failed) leaves its question waiting, to be answered again', async () => {
    const { message, board, events } = await deskWithQuestion();
    const refusing = { deliverable: () => undefined, send: async () => Promise.reject(new Error('ENOSPC: the inbox cannot be written')) } as unknown as typeof board.mailbox;
    const desk = new QuestionDesk({ board: board.tasks, mailbox: refusing, sink: board.sink, lead: () => 'lead', memberStatus: () => 'working', auto: () => false, emit: (event) => events.push(event) });
    desk.asked(message);
    await expect(desk.answer('text files', 'q-1-1')).rejects.toThrow('ENOSPC');
    expect(desk.pending().map((question) => question.questionId)).toEqual(['q-1-1']);
    await board.sink.flush();
    expect((await board.log.read({ types: ['question_answered', 'question_withdrawn'] })).map((event) => event.type)).toEqual(['question_answered', 'question_withdrawn']);
  });
});

/**
 * A teammate waiting for the answer to its question stops waiting once the task it asked about is
 * cancelled, and goes on to the next task — with real worker threads, the real watcher and the
 * offline model. Its lease is an hour (renewed every 20 minutes) and its idle poll never comes, so
 * only the wake a cancel brings can move it: the lease's renewal, which used to be the one thing that
 * noticed the cancel, cannot come within the test's ceiling.
 */
import { describe, expect, it } from 'vitest';
import { fileBoard } from '../../src/core/board/board.js';
import { POLL_NEVER_MS } from '../helpers/agent-team.js';
import { until } from '../helpers/agent-wait.js';
import { sessionsOnTempBoards, waitUntil } from '../helpers/repl-session.js';

const made = sessionsOnTempBoards('autoteam-ask-cancelled-');
/** The analyst's lease is an hour and its idle poll never comes: only a wake moves it. */
const waitingSession = () => made.session({ rootDir: made.board(), model: { kind: 'offline', reason: 'test' }, settings: { pollMs: POLL_NEVER_MS, leaseMs: 3_600_000, idleTimeoutMs: 0 } });

const REQUIREMENTS = ['Downloads', 'Desktop', 'Pictures'].map((folder) => `Write a Python script that organizes my ${folder} folder by file type.`);

describe('a question whose task is cancelled', () => {
  it('ends the wait at the cancel, and the analyst asks about the next task', async () => {
    const session = waitingSession();
    await session.start();
    const tasks = [];
    for (const requirement of REQUIREMENTS) tasks.push(await session.post(requirement));
    const [first, second, third] = tasks as [(typeof tasks)[0], (typeof tasks)[0], (typeof tasks)[0]];
    const askedAbout = (id: number) => session.pendingQuestions().some((question) => question.task === id && question.from === 'analyst');

    await until(() => askedAbout(first.id), 'the analyst asks about the first requirement');
    expect(session.task(second.id)!.status).toBe('pending');

    // The person's /cancel: the task is cancelled and its owner told.
    await session.cancel(first.pipeline!);
    await until(() => askedAbout(second.id), 'the analyst, no longer waiting, asks about the second requirement');
    expect(session.task(second.id)!.owner).toBe('analyst');

    // A cancel that tells nobody (written to the board by another process): the board change alone ends the wait.
    const board = fileBoard(session.rootDir);
    expect((await board.tasks.cancel(second.id, 'person', 'cancelled on the board')).ok).toBe(true);
    await until(() => askedAbout(third.id), 'the analyst, woken by the board change, asks about the third requirement');

    // The cancel's notice was no conversation: the analyst made no model call between its tasks. (Its
    // events reach the log in order, so once the third question is there, such a call would be too.)
    await waitUntil(async () => (await session.events({ types: ['question_asked'], pipeline: third.pipeline! })).length > 0, 'the third question in the log');
    expect((await session.events({ types: ['model_call'] })).filter((event) => event.agent === 'analyst' && event.task == null)).toEqual([]);

    // Neither cancelled task got an answer, not even the timeout's assumptions: the wait just ended.
    for (const task of [first, second]) {
      const history = session.task(task.id)!.history.map((entry) => entry.event);
      expect(history).toContain('asked');
      expect(history).not.toContain('answered');
      expect(session.task(task.id)!.status).toBe('cancelled');
    }
  });

  it("says the question is withdrawn before the analyst's next question, in the log a front end renders", async () => {
    const session = waitingSession();
    // What the activity stream shows, in its order (nothing here asks for pendingQuestions()).
    const shown: string[] = [];
    session.subscribe((event) => {
      if (event.type === 'team' && (event.event.type === 'question_asked' || event.event.type === 'question_withdrawn')) shown.push(`${event.event.type} #${event.event.task}`);
    });
    await session.start();
    const [first, second] = [await session.post(REQUIREMENTS[0]!), await session.post(REQUIREMENTS[1]!)];
    await until(() => shown.includes(`question_asked #${first.id}`), 'the analyst asks about the first requirement');
    // The lead holds it (the asker tells the log a moment before its message reaches the lead's inbox).
    await until(() => session.pendingQuestions().some((question) => question.task === first.id), "the question in the lead's inbox");
    await session.cancel(first.pipeline!);
    await until(() => shown.includes(`question_asked #${second.id}`), 'the analyst asks about the second requirement');
    expect(shown.slice(0, 3)).toEqual([`question_asked #${first.id}`, `question_withdrawn #${first.id}`, `question_asked #${second.id}`]);
  });

  it('is withdrawn in the log when its message reaches the lead only after the cancel, once', async () => {
    const session = made.session({ rootDir: made.board(), model: { kind: 'offline', reason: 'test' } });
    await session.start([]);
    const task = await session.post(REQUIREMENTS[0]!);
    await session.cancel(task.pipeline!);
    // The asker logged its question and sent it just before the cancel; the message comes after it.
    const board = fileBoard(session.rootDir);
    await board.registry.join('analyst', 'analyst');
    const questionId = `q-late-${Date.now()}`;
    // Twice (a message read again), then a second question: once that is withdrawn, both copies were read.
    for (const id of [questionId, questionId, `${questionId}-after`]) await board.mailbox.send('analyst', session.lead, 'Which folder?', 'question', { questionId: id, task: task.id });
    session.drainInbox();
    const withdrawn = async () => (await session.events({ types: ['question_withdrawn'] })).map((event) => (event.type === 'question_withdrawn' ? event : null));
    await waitUntil(async () => (await withdrawn()).some((event) => event?.questionId === `${questionId}-after`), 'the withdrawals in the log');
    expect((await withdrawn()).filter((event) => event?.questionId === questionId)).toEqual([expect.objectContaining({ task: task.id, agent: 'analyst', reason: `task #${task.id} is cancelled` })]);
    expect(session.pendingQuestions()).toEqual([]);
  });
});

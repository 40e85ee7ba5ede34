/**
 * A session that stops in the middle of the analyst's questions and starts again: answered questions
 * are not asked again, and the pending one is pending again, so the next line typed answers it.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type LeadEvent, LeadSession, type PendingQuestion } from '../../src/core/lead/session.js';
import { HANG_MS } from '../helpers/agent-wait.js';

const roots: string[] = [];
const sessions: LeadSession[] = [];
afterEach(async () => {
  for (const session of sessions.splice(0)) await session.close(1_000).catch(() => undefined);
  for (const root of roots.splice(0)) fs.rmSync(root, { recursive: true, force: true });
});

const REQUIREMENT = 'Write a Python script that organizes my Downloads folder by file type.';

function session(root: string, auto = false): LeadSession {
  const s = new LeadSession({ rootDir: root, model: { kind: 'offline', reason: 'test' }, settings: { pollMs: 50 }, auto });
  sessions.push(s);
  return s;
}

/** The next question the session shows (already pending, or the next one emitted). */
function nextQuestion(s: LeadSession, after = 0): Promise<PendingQuestion> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no question within ${HANG_MS / 1000} s`)), HANG_MS);
    const seen: PendingQuestion[] = [];
    const onEvent = (event: LeadEvent) => {
      if (event.type !== 'question') return;
      seen.push(event.question);
      if (seen.length > after) {
        clearTimeout(timer);
        s.off('event', onEvent);
        resolve(event.question);
      }
    };
    s.on('event', onEvent);
  });
}

/** A fresh board, a session on it, the requirement posted, and the analyst's first question. */
async function postAndAsk() {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-resume-')));
  roots.push(root);
  const first = session(root);
  const asked = nextQuestion(first);
  await first.start();
  const task = await first.post(REQUIREMENT);
  return { root, first, task, question: await asked };
}

describe('resume after a stop during questions', () => {
  it('asks nothing twice: the answered question comes from the board, the pending one is answered by the next line', async () => {
    const { root, first, task, question: question1 } = await postAndAsk();
    expect(question1.question).toMatch(/file types/);
    const q2 = nextQuestion(first);
    await first.answer('Pictures and Misc only');
    const question2 = await q2;
    expect(question2.question).toMatch(/same name already exists/);
    // Ctrl+C while the second question waits.
    await first.close(HANG_MS);
    sessions.splice(sessions.indexOf(first), 1);

    const second = session(root);
    const questions: PendingQuestion[] = [];
    second.on('event', (event) => {
      if (event.type === 'question') questions.push(event.question);
    });
    await second.start();
    // The pending question is back at once, before any teammate asks it.
    expect(questions.map((q) => [q.questionId, q.question])).toEqual([[question2.questionId, question2.question]]);
    await second.answer('skip and warn');
    const state = await second.waitForPipeline(task.pipeline!, AbortSignal.timeout(HANG_MS));
    expect(state.status).toBe('approved');
    // Shown once in the second session: re-asking after the restart found the answer, not the person.
    expect(questions).toHaveLength(1);
    const analysis = second.task(task.id)!;
    expect(analysis.artifacts.qa?.map((entry) => entry.answer)).toEqual(['Pictures and Misc only', 'skip and warn']);
    expect(analysis.history.filter((entry) => entry.event === 'asked').map((entry) => entry.detail)).toEqual([question1.question, question2.question]);
    expect(analysis.artifacts.criteria?.[1]?.criterion).toMatch(/left where it is, with a warning/);
  });

  it('with --auto, the simulated user answers the question the last lead left pending', async () => {
    const { root, first, task } = await postAndAsk();
    await first.close(HANG_MS);
    sessions.splice(sessions.indexOf(first), 1);

    const second = session(root, true);
    const events: LeadEvent[] = [];
    second.on('event', (event) => events.push(event));
    await second.start();
    const state = await second.waitForPipeline(task.pipeline!, AbortSignal.timeout(HANG_MS));
    expect(events.filter((event) => event.type === 'error')).toEqual([]);
    expect(state.status).toBe('approved');
    expect(events.find((event) => event.type === 'answered')).toMatchObject({ by: 'simulated user' });
  });
});

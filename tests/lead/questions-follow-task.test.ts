/**
 * A question follows its task: cancelling the task withdraws the question everywhere the person
 * sees it (the session's list, the ink question box's store, /inbox), a retry asks afresh, and the
 * person's next answer goes to the live question — never to the cancelled task.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type LeadEvent, LeadSession } from '../../src/core/lead/session.js';
import { inboxText } from '../../src/frontend/inbox-text.js';
import { QuestionStore } from '../../src/ui/stores.js';
import { until } from '../helpers/agent-wait.js';

const roots: string[] = [];
const sessions: LeadSession[] = [];
afterEach(async () => {
  for (const session of sessions.splice(0)) await session.close(1_000).catch(() => undefined);
  for (const root of roots.splice(0)) fs.rmSync(root, { recursive: true, force: true });
});

describe('questions follow their task', () => {
  it('cancel withdraws the pending question; after retry the answer goes to the new question', async () => {
    const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-questions-')));
    roots.push(root);
    const session = new LeadSession({ rootDir: root, model: { kind: 'offline', reason: 'test' }, settings: { pollMs: 50, leaseMs: 1_500, idleTimeoutMs: 0 } });
    sessions.push(session);
    const events: LeadEvent[] = [];
    session.on('event', (event) => events.push(event));
    await session.start();
    const box = new QuestionStore(session);
    const unfollow = box.follow();

    const first = await session.post('Write a Python script that organizes my Downloads folder by file type.');
    await until(() => session.pendingQuestions().length === 1, 'the analyst asks');
    expect(box.get()).toHaveLength(1);
    expect(inboxText(session)).toMatch(/analyst asks \(pipeline #\d+\): Which file types/);

    await session.cancel(first.pipeline!);
    // At once, not after the next watcher event: the person's next line must not answer a dead task.
    expect(session.pendingQuestions()).toEqual([]);
    expect(box.get()).toEqual([]);
    expect(inboxText(session)).toBe('Inbox empty.');
    const withdrawn = events.find((event) => event.type === 'question_withdrawn');
    expect(withdrawn).toMatchObject({ question: { task: first.id }, reason: `task #${first.id} is cancelled` });
    await expect(session.answer('Pictures and Misc only')).rejects.toThrow('no question is waiting for an answer');

    const retried = await session.retry(first.pipeline!);
    await until(() => session.pendingQuestions().length === 1, 'the analyst asks afresh');
    const [fresh] = session.pendingQuestions();
    expect(fresh).toMatchObject({ task: retried.id, question: expect.stringMatching(/^Which file types/) });
    expect(box.get()).toEqual([fresh]);

    const answered = await session.answer('Pictures and Misc only');
    expect(answered.task).toBe(retried.id);
    await until(() => (session.task(retried.id)!.artifacts.qa ?? []).length === 1, 'the answer recorded on the retried task');
    expect(session.task(retried.id)!.artifacts.qa![0]).toMatchObject({ answer: 'Pictures and Misc only' });
    expect(session.task(first.id)!.history.map((entry) => entry.event)).not.toContain('answered');
    unfollow();
  });
});

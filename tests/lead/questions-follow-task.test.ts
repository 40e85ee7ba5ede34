/**
 * A question follows its task: cancelling the task withdraws the question everywhere the person
 * sees it (the session's list, the ink question box's store, /inbox), a retry asks afresh, and the
 * person's next answer goes to the live question — never to the cancelled task.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type LeadEvent, LeadSession } from '../../src/core/lead/session.js';
import { inboxText } from '../../src/frontend/inbox-text.js';
import { QuestionStore } from '../../src/ui/stores.js';
import { until } from '../helpers/agent-wait.js';
import { cliEntry, DOWNLOADS_REQUIREMENT } from '../helpers/pipeline-cli.js';

const roots: string[] = [];
const sessions: LeadSession[] = [];
const children: ChildProcess[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
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

  it("an asker killed while its question waits: the question is withdrawn as its task is handed back, and the next analyst's is answered", async () => {
    const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-questions-')));
    roots.push(root);
    // No teammates of its own: the analysts are `autoteam worker` processes.
    const session = new LeadSession({ rootDir: root, model: { kind: 'offline', reason: 'test' }, settings: { pollMs: 100, idleTimeoutMs: 0 } });
    sessions.push(session);
    const events: LeadEvent[] = [];
    session.on('event', (event) => events.push(event));
    await session.start([]);
    const worker = (name: string) => {
      const child = spawn(process.execPath, [cliEntry, 'worker', '--name', name, '--role', 'analyst', '--dir', root], { cwd: root, env: { PATH: process.env.PATH ?? '', POLL_INTERVAL: '100ms', IDLE_TIMEOUT: '0' }, stdio: 'ignore' });
      children.push(child);
      return child;
    };

    const posted = await session.post(DOWNLOADS_REQUIREMENT);
    const a9 = worker('a9');
    await until(() => session.pendingQuestions().length === 1, 'a9 asks');
    expect(session.pendingQuestions()[0]).toMatchObject({ from: 'a9', task: posted.id });
    a9.kill('SIGKILL');
    await until(() => session.pendingQuestions().length === 0, 'the question withdrawn');
    expect(events.find((event) => event.type === 'question_withdrawn')).toMatchObject({ question: { from: 'a9' }, reason: `a9 is dead and task #${posted.id} was handed back` });
    // Not accepted into a dead member's inbox: the person's words would be lost there.
    await expect(session.answer('Images and Other')).rejects.toThrow('no question is waiting for an answer');
    expect(fs.existsSync(path.join(root, '.team', 'inbox', 'a9.jsonl')) ? fs.readFileSync(path.join(root, '.team', 'inbox', 'a9.jsonl'), 'utf8') : '').not.toContain('Images and Other');

    worker('a10');
    await until(() => session.pendingQuestions().length === 1, 'a10 asks afresh');
    expect(session.pendingQuestions()[0]).toMatchObject({ from: 'a10', task: posted.id });
    await session.answer('Images and Other');
    await until(() => (session.task(posted.id)!.artifacts.qa ?? []).length === 1, 'the answer recorded on the task');
    expect(session.task(posted.id)!.artifacts.qa![0]).toMatchObject({ answer: 'Images and Other' });
  });
});

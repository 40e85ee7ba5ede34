/**
 * BoardLead: a board acted on from outside the team (the web board's and the MCP server's face when
 * they are not the lead). Beside a lead session it takes no lease, posts a pipeline the team works,
 * sees the analyst's question from the board, answers it (and the lead stops waiting for it), and
 * counts the team's spend from the log. Without a lead it still shows and acts on the board.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { fileBoard } from '../../src/core/board/board.js';
import { BoardLead } from '../../src/core/lead/board-lead.js';
import { type LeadEvent, LeadSession } from '../../src/core/lead/session.js';
import { HANG_MS, until } from '../helpers/agent-wait.js';

const roots: string[] = [];
const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
  for (const root of roots.splice(0)) fs.rmSync(root, { recursive: true, force: true });
});

function tempRoot(): string {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-board-lead-')));
  roots.push(root);
  return root;
}

async function boardLead(root: string): Promise<BoardLead> {
  const board = fileBoard(root);
  const lead = new BoardLead(board, { reconcileMs: 200 });
  closers.push(() => board.close(), () => lead.close());
  await lead.start();
  return lead;
}

describe('BoardLead', () => {
  it('posts beside a running lead, answers its question, and the lead stops waiting for it', async () => {
    const root = tempRoot();
    const session = new LeadSession({ rootDir: root, model: { kind: 'offline', reason: 'test' }, settings: { pollMs: 50, leaseMs: 1_500, idleTimeoutMs: 0 } });
    closers.push(() => session.close(1_000));
    const told: LeadEvent[] = [];
    session.subscribe((event) => told.push(event));
    await session.start();
    const outside = await boardLead(root);
    const seen: LeadEvent[] = [];
    outside.subscribe((event) => seen.push(event));
    expect(outside.leader()).toMatchObject({ state: 'here', pid: process.pid });

    const first = await outside.post('Write a Python script that organizes my Downloads folder by file type.');
    expect(first).toMatchObject({ stage: 'requirements', pipeline: first.id });
    await until(() => outside.pendingQuestions().length === 1 && session.pendingQuestions().length === 1, 'the analyst asks; both see it');
    const [question] = outside.pendingQuestions();
    expect(question).toMatchObject({ from: 'analyst', task: first.id, question: expect.stringMatching(/^Which file types/) });
    await until(() => seen.some((event) => event.type === 'question'), 'the question told to the outside');

    await outside.answer('Pictures and Misc only', question!.questionId);
    // Answered from outside: the lead's list, box and inbox drop it once the log says so.
    // (The analyst may ask its next question at once: only this one is checked.)
    const waiting = (questions: ReadonlyArray<{ questionId: string }>) => questions.some((pending) => pending.questionId === question!.questionId);
    await until(() => !waiting(session.pendingQuestions()), 'the lead stops waiting');
    expect(told).toContainEqual(expect.objectContaining({ type: 'answered', answer: 'Pictures and Misc only', by: 'person' }));
    expect(waiting(outside.pendingQuestions())).toBe(false);
    await expect(outside.answer('again', question!.questionId)).rejects.toThrow(`no pending question '${question!.questionId}'`);

    // The offline analyst asks again (name clashes): answered from outside too, until the pipeline ends.
    const answering = outside.subscribe(() => {
      for (const next of outside.pendingQuestions()) void outside.answer('Skip the file and warn', next.questionId).catch(() => undefined);
    });
    const state = await outside.waitForPipeline(first.pipeline!, AbortSignal.timeout(HANG_MS));
    answering();
    expect(state.status, JSON.stringify(outside.snapshot().tasks.map((task) => [task.id, task.stage, task.status, task.history.at(-1)]))).toBe('approved');
    expect(outside.task(first.id)!.artifacts.qa).toEqual([expect.objectContaining({ answer: 'Pictures and Misc only' }), expect.objectContaining({ answer: 'Skip the file and warn' })]);
    const snapshot = outside.snapshot();
    expect(snapshot.pipelines).toEqual([expect.objectContaining({ id: first.pipeline, status: 'approved' })]);
    // The offline model's calls are on the log: each member's spend is counted from it.
    expect(snapshot.spend.members.engineer?.calls).toBeGreaterThan(0);
    expect(snapshot.team.members.map((member) => member.running)).toEqual([false, false, false]);
    const events = await outside.events({ pipeline: first.pipeline! });
    expect(events.map((event) => event.type)).toEqual(expect.arrayContaining(['task_posted', 'question_asked', 'question_answered', 'review_verdict', 'pipeline_status']));
  });

  it('posted before the lead started, its question answered from outside: the lead takes the answer, and never says the question withdrawn', async () => {
    const root = tempRoot();
    const outside = await boardLead(root);
    const first = await outside.post('Write a Python script that counts the words in a text file.');
    const session = new LeadSession({ rootDir: root, model: { kind: 'offline', reason: 'test' }, settings: { pollMs: 50, leaseMs: 1_500, idleTimeoutMs: 0 } });
    closers.push(() => session.close(1_000));
    const told: LeadEvent[] = [];
    session.subscribe((event) => told.push(event));
    await session.start();
    await until(() => outside.pendingQuestions().length === 1 && session.pendingQuestions().length === 1, 'the analyst asks; both see it');
    const [question] = outside.pendingQuestions();
    await outside.answer('Count words.', question!.questionId);
    const state = await session.waitForPipeline(first.pipeline!, AbortSignal.timeout(HANG_MS));
    expect(state.status).toBe('approved');
    const about = told.filter((event) => 'question' in event && event.question.questionId === question!.questionId).map((event) => event.type);
    expect(about).toEqual(['question', 'answered']);
  });

  it('works a board with no lead: shows it, posts, cancels and retries, and refuses what it cannot do', async () => {
    const root = tempRoot();
    const outside = await boardLead(root);
    expect(outside.leader()).toEqual({ state: 'none', pid: null, host: null, since: null });
    const posted = await outside.post('Count the words in a text file.');
    expect(outside.snapshot().tasks).toEqual([expect.objectContaining({ id: posted.id, status: 'pending', stage: 'requirements' })]);
    await expect(outside.answer('yes')).rejects.toThrow('no question is waiting for an answer');
    await expect(outside.post('   ')).rejects.toThrow();
    expect(await outside.cancel(posted.pipeline!)).toEqual([posted.id]);
    const retried = await outside.retry(posted.pipeline!);
    expect(retried).toMatchObject({ status: 'pending', stage: 'requirements', pipeline: posted.pipeline });
    await expect(outside.decidePlan('plan-404', true)).rejects.toThrow();
  });

  it('waits on sixteen pipelines at once without a listener-leak warning (each wait is a subscriber)', async () => {
    const root = tempRoot();
    const outside = await boardLead(root);
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);
    process.on('warning', onWarning);
    try {
      const posted = await Promise.all(Array.from({ length: 16 }, (_, i) => outside.post(`Count the words in text file number ${i + 1}.`)));
      const stop = new AbortController();
      const waits = posted.map((task) => outside.waitForPipeline(task.pipeline!, stop.signal));
      // Every cancel is a board change that wakes all sixteen waits, which subscribe again.
      for (const task of posted) await outside.cancel(task.pipeline!);
      const states = await Promise.all(waits);
      expect(states.map((state) => state.status)).toEqual(posted.map(() => 'cancelled'));
      // A warning is emitted on the next turn of the event loop.
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.filter((warning) => warning.startsWith('MaxListenersExceededWarning'))).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('posts as the lead on the board does at each post: in workspace/<n> beside a lead started with --no-worktree, with a worktree once it is gone', async () => {
    const root = tempRoot();
    const git = (...args: string[]) => execFileSync('git', ['-C', root, '-c', 'user.name=p', '-c', 'user.email=p@example.com', ...args], { encoding: 'utf8' });
    git('init', '-q', '-b', 'main');
    fs.writeFileSync(path.join(root, 'README.md'), '# A project\n');
    git('add', 'README.md');
    git('commit', '-q', '-m', 'Initial commit');
    const outside = await boardLead(root);
    const requirement = 'Write a Python script that counts the words in a text file.';
    expect((await outside.post(requirement, 'implementation')).artifacts.git?.branch).toMatch(/^autoteam\/1-/);
    // A lead started with --no-worktree takes the board (its lease says so): the next post works as it does.
    const lease = fileBoard(root).lease();
    await lease.acquire({ worktrees: false });
    closers.push(() => lease.release());
    const beside = await outside.post(requirement, 'implementation');
    expect(beside.artifacts.git).toBeUndefined();
    await lease.release();
    expect((await outside.post(requirement, 'implementation')).artifacts.git?.branch).toMatch(/^autoteam\/3-/);
  });
});

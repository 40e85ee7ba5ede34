/**
 * LeadApi's two reading halves on a real session over a real file board: snapshot() is plain data
 * that follows the board, and subscribe() delivers the session's events until it is undone.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { LeadApi } from '../../src/core/lead/lead-api.js';
import { type LeadEvent, LeadSession } from '../../src/core/lead/session.js';
import { askLead, boardOf, tempBoard, waitUntil } from '../helpers/repl-session.js';

const sessions: LeadSession[] = [];
const roots: string[] = [];
afterEach(async () => {
  for (const session of sessions.splice(0)) await session.close(1_000).catch(() => undefined);
  for (const root of roots.splice(0)) fs.rmSync(root, { recursive: true, force: true });
});

async function started(): Promise<{ session: LeadSession; root: string }> {
  const root = fs.realpathSync(tempBoard('autoteam-lead-api-'));
  roots.push(root);
  const session = new LeadSession({ rootDir: root, model: { kind: 'offline', reason: 'test' }, repo: false, team: 'demo' });
  sessions.push(session);
  await session.start([]);
  return { session, root };
}

const posted = (events: readonly LeadEvent[]) => events.filter((event) => event.type === 'team' && event.event.type === 'task_posted').length;

describe('LeadApi on a real session', () => {
  it('snapshot() is plain data that follows the board: tasks, pipelines, team, questions, plans, problems, models', async () => {
    const { session, root } = await started();
    const api: LeadApi = session;
    const empty = api.snapshot();
    expect(empty).toMatchObject({
      board: { location: root, where: root, rootDir: root, repository: null, problems: [] },
      tasks: [],
      pipelines: [],
      team: { name: 'demo', lead: 'lead', members: [] },
      questions: [],
      plans: [],
      spend: { total: { calls: 0 }, members: {} },
      models: { offline: true, roles: [], others: expect.stringMatching(/^offline scripted model/) },
      autoAnswer: false,
    });

    const first = await api.post('Write a Python script that organizes my Downloads folder by file type.');
    const board = boardOf(session);
    await board.registry.join('analyst', 'analyst', { status: 'waiting', pid: 1 });
    const plan = await board.requests.create({ kind: 'plan', from: 'analyst', to: 'lead', plan: 'Ask about the folders first.' });
    const question = await askLead(session, 'analyst', 'Which folders?', first.id);
    fs.writeFileSync(path.join(root, '.tasks', 'task_99.json'), '{ not json');
    await board.tasks.create({ subject: 'Count the files' });
    await waitUntil(() => api.snapshot().board.problems.length > 0 && api.snapshot().tasks.length === 2, 'the new task and the broken file on the board');

    const snapshot = api.snapshot();
    expect(JSON.parse(JSON.stringify(snapshot))).toEqual(snapshot);
    expect(snapshot.tasks.map((task) => [task.id, task.stage, task.status])).toEqual([
      [first.id, 'requirements', 'pending'],
      [first.id + 1, null, 'pending'],
    ]);
    expect(snapshot.pipelines).toEqual([{ id: first.pipeline, status: 'active', usage: { calls: 0, inputTokens: 0, outputTokens: 0 }, cost: null, workspace: path.join(root, 'workspace', String(first.pipeline)) }]);
    expect(snapshot.board.problems).toEqual([expect.stringContaining('task_99.json')]);
    expect(snapshot.team.members).toEqual([expect.objectContaining({ name: 'analyst', role: 'analyst', status: 'waiting', running: false, spend: expect.objectContaining({ calls: 0 }) })]);
    expect(snapshot.questions).toEqual([expect.objectContaining({ questionId: question.questionId, from: 'analyst', question: 'Which folders?', task: first.id })]);
    expect(snapshot.plans).toEqual([expect.objectContaining({ id: plan.id, from: 'analyst', plan: 'Ask about the folders first.' })]);

    // Commands show in the next snapshot: a cancelled pipeline, its question withdrawn; auto answers on.
    expect(await api.cancel(first.pipeline!)).toEqual([first.id]);
    api.setAutoAnswer(true);
    await waitUntil(() => api.snapshot().questions.length === 0, 'the question withdrawn with its task');
    const after = api.snapshot();
    expect(after.pipelines.map((pipeline) => pipeline.status)).toEqual(['cancelled']);
    expect(after.autoAnswer).toBe(true);
    expect(api.stateOf(first.pipeline!).status).toBe('cancelled');
  });

  it('subscribe() delivers every event in order until its unsubscribe is called', async () => {
    const { session } = await started();
    const api: LeadApi = session;
    const kept: LeadEvent[] = [];
    const left: LeadEvent[] = [];
    const stopKept = api.subscribe((event) => kept.push(event));
    const stopLeft = api.subscribe((event) => left.push(event));

    const first = await api.post('Write a Python script that organizes my Downloads folder by file type.');
    await waitUntil(() => posted(kept) === 1 && posted(left) === 1, 'both listeners told of the first post');
    stopLeft();
    const second = await api.post('Write a Python script that renames photos by the date they were taken.');
    await waitUntil(() => posted(kept) === 2, 'the listener still subscribed told of the second post');
    await api.catchUp();
    expect(posted(left)).toBe(1);
    const tasks = kept.flatMap((event) => (event.type === 'team' && event.event.type === 'task_posted' ? [event.event.task] : []));
    expect(tasks).toEqual([first.id, second.id]);
    stopKept();
    await api.cancel(second.pipeline!);
    await api.catchUp();
    expect(posted(kept)).toBe(2);
    expect(kept.some((event) => event.type === 'team' && event.event.type === 'task_cancelled')).toBe(false);
  });
});

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Mailbox } from '../../src/core/board/mailbox.js';
import { TaskBoard } from '../../src/core/board/task-board.js';
import { Pipeline } from '../../src/core/stages/pipeline.js';

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) fs.rmSync(root, { recursive: true, force: true });
});

async function setup() {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-repair-'));
  roots.push(root);
  const board = new TaskBoard(root);
  const mailbox = new Mailbox(root);
  await mailbox.registry.ensure('repair');
  return { root, board, pipeline: new Pipeline(board, mailbox) };
}

describe('Pipeline.repair', () => {
  it('posts the successor of a stage task completed by a process that died before posting it', async () => {
    const { board, pipeline } = await setup();
    const first = await pipeline.post('Write a Python script that prints hello.');
    const claim = await board.claim(first.id, 'analyst');
    if (!claim.ok) throw new Error(claim.reason);
    // What advance() writes first, without the second write (the successor): a crash in between.
    await board.update(first.id, { artifacts: { requirements: { goal: 'print hello' } } });
    await board.complete(first.id, { owner: 'analyst', token: claim.task.claims }, 'done', { summary: '1 requirement' });
    expect(pipeline.state(first.pipeline!).tasks).toHaveLength(1);

    expect(await pipeline.repair()).toBe(1);
    const tasks = pipeline.state(first.pipeline!).tasks;
    expect(tasks.map((t) => [t.stage, t.status])).toEqual([
      ['requirements', 'completed'],
      ['implementation', 'pending'],
    ]);
    expect(tasks[1]!.handoff).toContain('- goal: print hello');
    expect(tasks[1]!.artifacts.from).toBe(first.id);
    // Idempotent: nothing more to post, and a normal advance would not post twice either.
    expect(await pipeline.repair()).toBe(0);
  });

  it('posts nothing over a later task file that does not read (broken by hand): it may be the successor, and the pipeline long approved', async () => {
    const { root, board, pipeline } = await setup();
    const first = await pipeline.post('Write a Python script that prints hello.');
    const claim = await board.claim(first.id, 'analyst');
    if (!claim.ok) throw new Error(claim.reason);
    await board.update(first.id, { artifacts: { requirements: { goal: 'print hello' } } });
    await pipeline.advance(claim.task, { owner: 'analyst', token: claim.task.claims }, { tool: 'complete_requirements_analysis', artifacts: { summary: 's' }, result: 's' });
    const [, next] = pipeline.state(first.pipeline!).tasks;
    expect(next).toMatchObject({ stage: 'implementation', artifacts: { from: first.id } });
    // The successor's file cut short by hand: the board skips it and names it.
    fs.writeFileSync(path.join(root, '.tasks', `task_${next!.id}.json`), '{"id": 2, "subject": "Impl');
    // A lead started on the board now: it reads every file.
    const later = new TaskBoard(root);
    const repairs = new Pipeline(later, new Mailbox(root));
    expect(later.list().map((task) => task.id)).toEqual([first.id]);
    expect(later.problems().map((problem) => path.basename(problem.path))).toEqual([`task_${next!.id}.json`]);
    expect(await repairs.repair()).toBe(0);
    expect(fs.readdirSync(path.join(root, '.tasks')).filter((name) => /^task_\d+\.json$/.test(name))).toHaveLength(2);
    // What is left of it names another pipeline: it is not this one's successor, and the hand-over is due.
    fs.writeFileSync(path.join(root, '.tasks', `task_${next!.id}.json`), `{"id": ${next!.id}, "pipeline": ${first.pipeline! + 8}, "subject": "Impl`);
    const other = new TaskBoard(root);
    expect(await new Pipeline(other, new Mailbox(root)).repair()).toBe(1);
  });

  it('never posts a successor twice when advance and repair race', async () => {
    const { board, pipeline } = await setup();
    const first = await pipeline.post('Write a Python script that prints hello.');
    const claim = await board.claim(first.id, 'analyst');
    if (!claim.ok) throw new Error(claim.reason);
    await board.update(first.id, { artifacts: { requirements: { goal: 'print hello' } } });
    const [advanced] = await Promise.all([
      pipeline.advance(claim.task, { owner: 'analyst', token: claim.task.claims }, { tool: 'complete_requirements_analysis', artifacts: { summary: 's' }, result: 's' }),
      pipeline.repair(),
      pipeline.repair(),
    ]);
    expect(advanced.ok).toBe(true);
    expect(pipeline.state(first.pipeline!).tasks.filter((t) => t.stage === 'implementation')).toHaveLength(1);
  });
});

/** Posts a requirement and claims its analysis, with a requirement recorded, ready to complete. */
async function claimedAnalysis(board: TaskBoard, pipeline: Pipeline) {
  const first = await pipeline.post('Write a Python script that prints hello.');
  const claim = await board.claim(first.id, 'analyst');
  if (!claim.ok) throw new Error(claim.reason);
  await board.update(first.id, { artifacts: { requirements: { goal: 'print hello' } } });
  return { first, fence: { owner: 'analyst', token: claim.task.claims }, task: claim.task };
}

/**
 * A cancel that meets a stage's completion: whichever write lands first, the pipeline ends cancelled
 * with nothing open, and no stage is posted after the cancel to be worked. The window is real (a
 * completion is written, then its successor posted), so it is opened on purpose and raced for real.
 */
describe('cancel against a hand-over', () => {
  it('between a completion and its successor: the successor is posted cancelled, and nothing is posted after', async () => {
    const { board, pipeline } = await setup();
    const { first, fence } = await claimedAnalysis(board, pipeline);
    // What advance() writes first; the successor's post has not come yet.
    await board.complete(first.id, fence, 'done', { summary: '1 requirement' });

    const cancelled = await pipeline.cancel(first.pipeline!, 'lead', 'changed my mind');
    const state = pipeline.state(first.pipeline!);
    expect(state.status).toBe('cancelled');
    expect(state.tasks.map((task) => [task.stage, task.status])).toEqual([
      ['requirements', 'completed'],
      ['implementation', 'cancelled'],
    ]);
    expect(cancelled).toEqual([state.tasks[1]!.id]);
    expect(state.tasks[1]!.artifacts.from).toBe(first.id);
    // The completer's late post (or the lead's repair) finds the successor there: nothing new.
    expect(await pipeline.repair()).toBe(0);
    expect(pipeline.state(first.pipeline!).tasks).toHaveLength(2);
    // A retry resumes at the stage that was next, with what the analysis handed over.
    const retried = await pipeline.retry(first.pipeline!, 'lead');
    expect(retried).toMatchObject({ stage: 'implementation', status: 'pending' });
    expect(retried.handoff).toContain('- goal: print hello');
  });

  it('raced for real, twenty times: the pipeline always ends cancelled, with nothing open', async () => {
    const { board, pipeline } = await setup();
    for (let i = 0; i < 20; i++) {
      const { first, fence, task } = await claimedAnalysis(board, pipeline);
      const [cancelled, advanced] = await Promise.all([
        pipeline.cancel(first.pipeline!, 'lead'),
        pipeline.advance(task, fence, { tool: 'complete_requirements_analysis', artifacts: { summary: 's' }, result: 's' }),
      ]);
      const state = pipeline.state(first.pipeline!);
      const open = state.tasks.filter((t) => t.status === 'pending' || t.status === 'in_progress');
      expect({ status: state.status, open: open.map((t) => t.id) }, `round ${i}: advance ${advanced.ok ? 'completed' : `refused (${advanced.reason})`}`).toEqual({ status: 'cancelled', open: [] });
      expect(cancelled.length).toBe(1);
      // At most one successor, whoever posted it.
      expect(state.tasks.filter((t) => t.stage === 'implementation').length).toBeLessThanOrEqual(1);
    }
  });
});

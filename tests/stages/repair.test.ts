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

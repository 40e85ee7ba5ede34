/**
 * The notice a cancel sends the owner of a task reaches its model only while it works on that task:
 * idle, it is no conversation (a model call about nothing), and on the next task it would tell the
 * model to stop work that was never cancelled. Other messages still reach the model. Through the
 * real pipeline cancel and the file board's inboxes.
 */
import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { fileBoard } from '../../src/core/board/board.js';
import { TeammateInbox } from '../../src/core/agent/teammate-inbox.js';
import { Wake } from '../../src/core/agent/wake.js';
import { Pipeline } from '../../src/core/stages/pipeline.js';
import { tempBoard } from '../helpers/repl-session.js';

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) fs.rmSync(root, { recursive: true, force: true });
});

/** A board where the analyst holds pipeline #1's first task, and a cancel of that pipeline has told it so. */
async function cancelledUnderAnalyst() {
  const root = tempBoard('autoteam-cancel-notice-');
  roots.push(root);
  const board = fileBoard(root);
  const pipelines = new Pipeline(board.tasks, board.mailbox, { events: board.sink });
  await board.registry.join('analyst', 'analyst');
  const task = await pipelines.post('Write a Python script that counts words.');
  expect((await board.tasks.claim(task.id, 'analyst', { role: 'analyst' })).ok).toBe(true);
  await pipelines.cancel(task.pipeline!, 'lead');
  await board.mailbox.send('lead', 'analyst', 'Please keep the output short.', 'message');
  return { board, task, inbox: new TeammateInbox('analyst', board.mailbox, board.requests, new Wake(), 1_000) };
}

describe("a cancel's notice to the owner", () => {
  it('is no conversation for an idle teammate; the other messages are', async () => {
    const { inbox } = await cancelledUnderAnalyst();
    const { conversation } = await inbox.whileIdle();
    expect(conversation.map((message) => message.content)).toEqual(['Please keep the output short.']);
  });

  it("does not reach the model during another task's turns", async () => {
    const { task, inbox } = await cancelledUnderAnalyst();
    const { inject } = await inbox.betweenTurns(task.id + 1);
    expect(inject).toContain('Please keep the output short.');
    expect(inject).not.toContain('cancelled');
  });

  it("reaches the model during the cancelled task's own turns", async () => {
    const { task, inbox } = await cancelledUnderAnalyst();
    const { inject } = await inbox.betweenTurns(task.id);
    expect(inject).toContain(`Task #${task.id} was cancelled by lead: stop working on it.`);
    expect(inject).toContain('Please keep the output short.');
  });
});

/**
 * `--auto`'s simulated user on a real model spends a model call per answer: it is told as a
 * `model_call` event (purpose `simulated_user`) and carried on the question's task, so its pipeline's
 * totals and budgets count it.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { fileBoard } from '../../src/core/board/board.js';
import { createAnswerer } from '../../src/core/lead/simulated-user.js';
import { Pipeline } from '../../src/core/stages/pipeline.js';
import { FakeModel, reply, text } from '../helpers/fake-model.js';
import { until } from '../helpers/agent-wait.js';

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) fs.rmSync(root, { recursive: true, force: true });
});

describe('the simulated user on a real model', () => {
  it('counts each answer it asks the model for, on the question’s task and in the event log', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-simulated-'));
    roots.push(root);
    const board = fileBoard(root);
    await board.registry.ensure('test');
    const pipelines = new Pipeline(board.tasks, board.mailbox, { events: board.sink });
    const task = await pipelines.post('Write a Python script that counts words.');
    const model = new FakeModel([reply(text('Plain text files, UTF-8.'))]);
    const answerer = createAnswerer(model, board.tasks, board.sink);

    expect(await answerer.answer({ question: 'Which files?', task: task.id, pipeline: task.pipeline })).toBe('Plain text files, UTF-8.');
    expect(model.requests).toHaveLength(1);
    expect(fileBoard(root).tasks.get(task.id).usage).toMatchObject({ calls: 1, inputTokens: 50, outputTokens: 10 });
    // The log's append is its own: waited for, as any reader of the log would.
    const log = path.join(root, '.team', 'events.jsonl');
    const calls = await until(() => {
      const found = fs.readFileSync(log, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { type: string }).filter((event) => event.type === 'model_call');
      return found.length ? found : null;
    }, 'the call in the event log');
    expect(calls).toEqual([expect.objectContaining({ agent: 'simulated-user', role: 'user', purpose: 'simulated_user', task: task.id, pipeline: task.pipeline, inputTokens: 50, outputTokens: 10 })]);
    await board.close();
  });
});

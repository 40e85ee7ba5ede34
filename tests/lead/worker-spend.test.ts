/**
 * The lead counts what a teammate of another process (`autoteam worker`) spends, from its model
 * calls in the board's log: `/team`, the panel and the total show it. A thread of this session
 * reports its own calls over its port, so its calls in the log do not count twice.
 */
import { describe, expect, it } from 'vitest';
import { fileBoard } from '../../src/core/board/board.js';
import type { EventInput } from '../../src/core/events/schema.js';
import { sessionsOnTempBoards, waitUntil } from '../helpers/repl-session.js';

const made = sessionsOnTempBoards('autoteam-worker-spend-');

/** A model call as a teammate's thread logs it. */
const call = (agent: string, role: string, inputTokens: number): EventInput => ({
  type: 'model_call',
  agent,
  role,
  pipeline: null,
  task: null,
  provider: 'anthropic',
  model: 'claude-sonnet-4-5',
  purpose: 'turn',
  inputTokens,
  outputTokens: 20,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  costUsd: null,
  latencyMs: 5,
  stopReason: 'tool_use',
  text: '',
});

describe("a worker's spend", () => {
  it('is counted from the log for another process\'s teammate, never twice for this session\'s own', async () => {
    const root = made.board();
    const lead = made.session({ rootDir: root, model: { kind: 'offline', reason: 'test' } });
    await lead.start([]);
    lead.spawn('engineer', 'engineer');
    const worker = fileBoard(root);
    await worker.registry.join('eng-x', 'engineer', { status: 'idle', pid: process.pid });
    worker.sink.emit(call('eng-x', 'engineer', 100));
    // The session's own thread: its port says what it spent; its line in the log is not counted again.
    worker.sink.emit(call('engineer', 'engineer', 5_000));
    worker.sink.emit(call('lead', 'lead', 7_000));
    worker.sink.emit(call('eng-x', 'engineer', 300));
    await worker.sink.flush();
    await waitUntil(() => lead.snapshot().spend.members['eng-x']?.calls === 2, "eng-x's two calls");
    const { spend, team } = lead.snapshot();
    expect(spend.members['eng-x']).toMatchObject({ calls: 2, inputTokens: 400, outputTokens: 40 });
    expect(spend.members['engineer']).toBeUndefined();
    expect(spend.members['lead']).toBeUndefined();
    expect(spend.total).toMatchObject({ calls: 2, inputTokens: 400 });
    expect(team.members.find((member) => member.name === 'eng-x')?.spend).toMatchObject({ calls: 2, inputTokens: 400 });
  });
});

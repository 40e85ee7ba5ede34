/**
 * The lead counts what a teammate of another process (`autoteam worker`) spends, and its own turns,
 * from their model calls in the board's log: `/team`, the panel and the total show it. A thread of
 * this session reports its own calls over its port, so its calls in the log do not count twice.
 */
import { describe, expect, it } from 'vitest';
import { fileBoard } from '../../src/core/board/board.js';
import { modelCallEvent } from '../helpers/model-call.js';
import { sessionsOnTempBoards, waitUntil } from '../helpers/repl-session.js';

const made = sessionsOnTempBoards('autoteam-worker-spend-');

describe("a worker's spend", () => {
  it('is counted from the log for another process\'s teammate, never twice for this session\'s own', async () => {
    const root = made.board();
    const lead = made.session({ rootDir: root, model: { kind: 'offline', reason: 'test' } });
    await lead.start([]);
    lead.spawn('engineer', 'engineer');
    const worker = fileBoard(root);
    await worker.registry.join('eng-x', 'engineer', { status: 'idle', pid: process.pid });
    worker.sink.emit(modelCallEvent('eng-x', 'engineer', 100));
    // The session's own thread: its port says what it spent; its line in the log is not counted again.
    worker.sink.emit(modelCallEvent('engineer', 'engineer', 5_000));
    worker.sink.emit(modelCallEvent('lead', 'lead', 7_000));
    worker.sink.emit(modelCallEvent('eng-x', 'engineer', 300));
    await worker.sink.flush();
    await waitUntil(() => lead.snapshot().spend.members['eng-x']?.calls === 2, "eng-x's two calls");
    await waitUntil(() => lead.snapshot().spend.members['lead']?.calls === 1, "the lead's call");
    const { spend, team } = lead.snapshot();
    expect(spend.members['eng-x']).toMatchObject({ calls: 2, inputTokens: 400, outputTokens: 40 });
    expect(spend.members['engineer']).toBeUndefined();
    // The lead's turns run on no thread of the team: the log is where they are counted.
    expect(spend.members['lead']).toMatchObject({ calls: 1, inputTokens: 7_000 });
    expect(spend.total).toMatchObject({ calls: 3, inputTokens: 7_400 });
    expect(team.members.find((member) => member.name === 'eng-x')?.spend).toMatchObject({ calls: 2, inputTokens: 400 });
  });
});

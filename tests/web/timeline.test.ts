/** The web board's timeline line for a model call (what a turn said, or that the conversation was compacted: its summary is no one's words), and a card's age. */
import { describe, expect, it } from 'vitest';
import type { TeamEvent } from '../../src/core/events/schema.js';
import { TaskSchema } from '../../src/core/board/schemas.js';
import { cardOf, timelineEntry } from '../../src/web/views.js';

const call = (purpose: 'turn' | 'compaction', text: string): TeamEvent => ({
  type: 'model_call', ts: '2026-12-05T05:00:00.000Z', team: 't', seq: 1, pipeline: 1, task: 2, agent: 'engineer', role: 'engineer', provider: 'anthropic', model: 'claude-test',
  purpose, inputTokens: 5_200, outputTokens: 120, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: null, latencyMs: 900, stopReason: 'end_turn', text,
});

describe('the timeline of a pipeline', () => {
  it("shows a turn's words, and a compaction as what it was, not as the agent's words", () => {
    expect(timelineEntry(call('turn', 'Writing the script now.'))).toMatchObject({ agent: 'engineer', text: 'says: Writing the script now.' });
    expect(timelineEntry(call('compaction', 'SUMMARY: wrote wordcount.py'))).toMatchObject({ agent: 'engineer', text: 'compacted its conversation (5200 tokens summarised)' });
  });
});

describe('a card of the board', () => {
  it("ages from the task's last step, not from its lease's renewal, which moves updatedAt every few seconds", () => {
    const task = TaskSchema.parse({
      id: 4, subject: 'Implement: word counter', status: 'in_progress', owner: 'engineer', stage: 'implementation', pipeline: 1, claims: 1,
      lease: { owner: 'engineer', token: 1, until: '2026-12-05T05:02:10.000Z' },
      history: [{ at: '2026-12-05T05:00:00.000Z', by: 'analyst', event: 'created' }, { at: '2026-12-05T05:00:01.000Z', by: 'engineer', event: 'claimed' }],
      createdAt: '2026-12-05T05:00:00.000Z', updatedAt: '2026-12-05T05:01:40.000Z',
    });
    expect(cardOf(task)).toMatchObject({ since: '2026-12-05T05:00:01.000Z', updatedAt: '2026-12-05T05:01:40.000Z' });
  });
});

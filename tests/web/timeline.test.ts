/** The web board's timeline line for a model call: what a turn said, or that the conversation was compacted (its summary is no one's words). */
import { describe, expect, it } from 'vitest';
import type { TeamEvent } from '../../src/core/events/schema.js';
import { timelineEntry } from '../../src/web/views.js';

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

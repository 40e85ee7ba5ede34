import { describe, expect, it } from 'vitest';
import type { Task } from '../../src/core/board/schemas.js';
import { successorOf } from '../../src/core/stages/pipeline-flow.js';
import { BUILTIN_REGISTRY } from '../../src/core/stages/stage-registry.js';

const at = new Date().toISOString();
const task = (id: number, stage: string, revision: number, artifacts: Record<string, unknown>): Task =>
  ({ id, stage, status: 'completed', artifacts, pipeline: 1, revision, history: [], createdAt: at, updatedAt: at, description: 'req' }) as never;

describe('successorOf: what follows a completed stage task, in one call', () => {
  it('a submission goes on to review at the same revision, carrying the requirement and what the signal carries', () => {
    const done = task(2, 'implementation', 0, { requirement: 'req', signal: 'submit_for_review', criteria: [], submitted: { files: [] }, notes: 'private' });
    const next = successorOf(BUILTIN_REGISTRY, [done], done);
    expect(next?.definition.stage).toBe('review');
    expect(next?.revision).toBe(0);
    expect(next?.artifacts).toMatchObject({ from: 2, requirement: 'req', criteria: [] });
    expect(next?.artifacts).not.toHaveProperty('notes');
    expect(next?.sentBack).toBeUndefined();
  });

  it('work sent back goes to the next revision; its re-review is told which review sent it back', () => {
    const earlier = task(3, 'implementation', 0, { signal: 'submit_for_review' });
    const sendingBack = task(4, 'review', 0, { signal: 'request_revision', verdict: 'changes_requested' });
    const next = successorOf(BUILTIN_REGISTRY, [earlier, sendingBack], sendingBack);
    expect(next?.definition.stage).toBe('implementation');
    expect(next?.revision).toBe(1);
    const revised = task(5, 'implementation', 1, { signal: 'submit_for_review' });
    const reReview = successorOf(BUILTIN_REGISTRY, [earlier, sendingBack, revised], revised);
    expect(reReview?.definition.stage).toBe('review');
    expect(reReview?.revision).toBe(1);
    expect(reReview?.sentBack).toBe(sendingBack);
  });

  it('nothing follows an approval', () => {
    const approved = task(5, 'review', 0, { signal: 'approve_code', final: true });
    expect(successorOf(BUILTIN_REGISTRY, [approved], approved)).toBeNull();
  });
});

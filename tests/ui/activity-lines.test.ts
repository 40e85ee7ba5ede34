/** The activity lines a released task gets: a retry says its attempt and when; a release that is no retry says neither. */
import { describe, expect, it } from 'vitest';
import { describeSessionEvent, describeTeamEvent } from '../../src/frontend/activity.js';
import { TeamEventSchema } from '../../src/core/events/schema.js';

const view = { verbose: false, width: 200 };
const released = (extra: Record<string, unknown>) =>
  TeamEventSchema.parse({ type: 'task_released', ts: '2026-12-02T10:00:00.000Z', team: 'default', pipeline: 1, task: 1, agent: 'analyst', kind: 'error', token: 1, ...extra });

describe('activity lines of a released task', () => {
  it('a retry after an error: its attempt and when the task may be claimed again', () => {
    const line = describeTeamEvent(released({ detail: 'model error: overloaded', attempt: 2, notBefore: '2026-12-02T10:00:05.000Z' }), view);
    expect(line?.text).toBe('[analyst] released #1 after an error (model error: overloaded); attempt 2, claimable again in 5 s');
  });

  it('a release after an error no retry fixes (the teammate stops): no attempt, no "?"', () => {
    const line = describeTeamEvent(released({ detail: 'model error: Cannot reach the model API at http://127.0.0.1:9 (ECONNREFUSED)' }), view);
    expect(line?.text).toBe('[analyst] released #1 after an error (model error: Cannot reach the model API at http://127.0.0.1:9 (ECONNREFUSED))');
  });
});

describe('the line that ends a pipeline', () => {
  const status = (extra: Record<string, unknown>) =>
    TeamEventSchema.parse({ type: 'pipeline_status', ts: '2026-12-02T10:00:00.000Z', team: 'default', pipeline: 1, task: 5, agent: 'reviewer', ...extra });
  const workspaces = (pipeline: number) => (pipeline === 1 ? '/home/me/board/workspace/1' : undefined);

  it('approved: says where the approved files are', () => {
    const line = describeTeamEvent(status({ status: 'approved', reason: 'Pipeline #1 approved: lgtm' }), view, () => undefined, workspaces);
    expect(line?.text).toBe('= Pipeline #1 approved: lgtm — files in /home/me/board/workspace/1');
  });

  it('failed, or approved where the workspace is not known: the reason alone', () => {
    expect(describeTeamEvent(status({ status: 'failed', reason: 'Pipeline #1 failed: stuck' }), view, () => undefined, workspaces)?.text).toBe('= Pipeline #1 failed: stuck');
    expect(describeTeamEvent(status({ status: 'approved', reason: 'Pipeline #1 approved: lgtm' }), view)?.text).toBe('= Pipeline #1 approved: lgtm');
  });

  it('cancelled: names the pipeline before who cancelled it and why', () => {
    expect(describeTeamEvent(status({ status: 'cancelled', reason: 'cancelled by lead: autoteam run timed out after 3.0 s' }), view)?.text).toBe(
      '= Pipeline #1 cancelled by lead: autoteam run timed out after 3.0 s',
    );
    expect(describeTeamEvent(status({ status: 'cancelled', reason: 'blocked by a hook' }), view)?.text).toBe('= Pipeline #1 cancelled: blocked by a hook');
    expect(describeTeamEvent(status({ status: 'cancelled' }), view)?.text).toBe('= Pipeline #1 cancelled');
  });
});

describe('a question the last session left pending', () => {
  it('is shown with its pipeline, and as left over from the last session', () => {
    const session = { task: () => null, snapshot: () => ({ pipelines: [] }) } as unknown as Parameters<typeof describeSessionEvent>[0];
    const question = { questionId: 'q1', from: 'analyst', question: 'What input does it read?', task: 1, pipeline: 3, at: '2026-12-02T10:00:00.000Z' };
    expect(describeSessionEvent(session, { type: 'question', question, resumed: true }, view)?.text).toBe('? analyst asks (pipeline #3), still waiting from the last session: What input does it read?');
    // A question asked in this session is shown from the log (question_asked), not here.
    expect(describeSessionEvent(session, { type: 'question', question }, view)).toBeNull();
  });
});

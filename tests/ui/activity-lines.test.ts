/** The activity lines a released task gets: a retry says its attempt and when; a release that is no retry says neither. */
import { describe, expect, it } from 'vitest';
import { describeTeamEvent } from '../../src/frontend/activity.js';
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

import { describe, expect, it } from 'vitest';
import { type Task, TaskSchema } from '../../src/core/board/schemas.js';
import type { ProtocolRequest } from '../../src/core/board/requests.js';
import { waitingPlans } from '../../src/core/lead/lead-inbox.js';
import { busyReason, stuckPipelines } from '../../src/core/lead/waiting.js';

const at = '2026-12-01T10:00:00.000Z';
const task = (id: number, pipeline: number, stage: string, role: string | null, status: Task['status']): Task =>
  TaskSchema.parse({ id, subject: `${stage} of #${pipeline}`, status, role, stage, pipeline, owner: status === 'in_progress' ? role : null, createdAt: at, updatedAt: at });

// Pipeline 1 waits for an engineer; 2 has its engineer at work; 3 waits for a reviewer; 4 is between
// two stages (its analysis done, the next not posted yet); 5 is approved.
const tasks = [
  task(1, 1, 'requirements', 'analyst', 'completed'),
  task(2, 1, 'implementation', 'engineer', 'pending'),
  task(3, 2, 'implementation', 'engineer', 'in_progress'),
  task(4, 3, 'review', 'reviewer', 'pending'),
  task(5, 4, 'requirements', 'analyst', 'completed'),
  { ...task(6, 5, 'review', 'reviewer', 'completed'), artifacts: { verdict: 'approved' as const, final: true } },
];
const board = { list: () => tasks, scanUnclaimed: () => [] };

describe('a pipeline nobody here can move', () => {
  it('is one whose open tasks all wait for a role nobody serves; work in progress or between stages is not', () => {
    expect(stuckPipelines(tasks, new Set(['analyst', 'reviewer'])).map(({ pipeline, waiting }) => [pipeline, waiting.map((t) => t.id)])).toEqual([[1, [2]]]);
    expect(stuckPipelines(tasks, new Set(['analyst'])).map(({ pipeline }) => pipeline)).toEqual([1, 3]);
    // A teammate of role `any` takes every role.
    expect(stuckPipelines(tasks, new Set(['any']))).toEqual([]);
  });

  it('does not keep the team busy: busyReason names only the pipelines that can still move', () => {
    const running = [{ role: 'analyst' }, { role: 'reviewer' }];
    const state = { running, stopped: false, unanswered: false, tasks: board };
    expect(busyReason({ ...state, serving: new Set(['analyst', 'reviewer']) })).toBe('pipeline #2, #3, #4 still active');
    expect(busyReason({ ...state, serving: new Set(['analyst']) })).toBe('pipeline #2, #4 still active');
    expect(busyReason({ ...state, serving: new Set(['analyst', 'engineer', 'reviewer']) })).toBe('pipeline #1, #2, #3, #4 still active');
  });

  it('between two stages with a later task file that does not read (it may be the next stage, which no repair posts over) is stuck', () => {
    const serving = new Set(['analyst', 'engineer', 'reviewer']);
    const unread = (id: number) => ({ path: `/board/.tasks/task_${id}.json`, message: `/board/.tasks/task_${id}.json: not valid JSON` });
    // Pipeline 4's last task is #5: a broken #7 may be its successor — unless what is left of it names
    // another pipeline; a broken #3 cannot, nor a misnamed file.
    expect(stuckPipelines(tasks, serving, new Set(), [{ id: 7, pipeline: undefined }]).map(({ pipeline, waiting }) => [pipeline, waiting])).toEqual([[4, []]]);
    expect(stuckPipelines(tasks, serving, new Set(), [{ id: 7, pipeline: 4 }]).map(({ pipeline }) => pipeline)).toEqual([4]);
    expect(stuckPipelines(tasks, serving, new Set(), [{ id: 7, pipeline: 2 }])).toEqual([]);
    expect(stuckPipelines(tasks, serving, new Set(), [{ id: 7, pipeline: null }])).toEqual([]);
    expect(stuckPipelines(tasks, serving, new Set(), [{ id: 3, pipeline: undefined }])).toEqual([]);
    const state = { running: [{ role: 'analyst' }], stopped: false, unanswered: false, tasks: board, serving };
    expect(busyReason({ ...state, problems: [unread(7)] })).toBe('pipeline #1, #2, #3 still active');
    expect(busyReason({ ...state, problems: [unread(3), { path: '/board/.tasks/task_abc.json', message: 'misnamed' }] })).toBe('pipeline #1, #2, #3, #4 still active');
  });

  it('counts the work of live teammates elsewhere when this session runs none (a lead with --no-team and `autoteam worker`s)', () => {
    const state = { running: [], stopped: false, unanswered: false, tasks: board };
    expect(busyReason({ ...state, serving: new Set(['any']) })).toBe('pipeline #1, #2, #3, #4 still active');
    expect(busyReason({ ...state, serving: new Set(['engineer']) })).toBe('pipeline #1, #2, #4 still active');
    expect(busyReason({ ...state, serving: new Set() })).toBeNull();
  });
});

describe('a plan that waits for the person', () => {
  const plan = (id: string, from: string, task: number | null): ProtocolRequest => ({ id, kind: 'plan', from, to: 'lead', status: 'pending', task, plan: '1. do it', createdAt: at, updatedAt: at });

  it('is one whose teammate still holds its task: a plan left by a teammate that is gone waits for nobody', () => {
    const requests = { list: () => [plan('plan-live', 'engineer', 3), plan('plan-stale', 'engineer-2', 3), plan('plan-done', 'analyst', 1)] };
    expect(waitingPlans(requests, board).map(({ id }) => id)).toEqual(['plan-live']);
  });

  it('keeps its task out of the work in flight, and no other work', () => {
    const running = [{ role: 'analyst' }, { role: 'engineer' }, { role: 'reviewer' }];
    const state = { running, stopped: false, unanswered: false, tasks: board, serving: new Set(['analyst', 'engineer', 'reviewer']) };
    // #3's engineer waits on its plan: pipeline 2 is still, the others move.
    expect(busyReason({ ...state, awaiting: new Set([3]) })).toBe('pipeline #1, #3, #4 still active');
    expect(stuckPipelines(tasks, state.serving, new Set([3])).map(({ pipeline }) => pipeline)).toEqual([2]);
    // Only the plan left: nothing moves.
    const alone = { list: () => [task(3, 2, 'implementation', 'engineer', 'in_progress')], scanUnclaimed: () => [] };
    expect(busyReason({ ...state, tasks: alone, awaiting: new Set([3]) })).toBeNull();
    expect(busyReason({ ...state, tasks: alone })).toBe('pipeline #2 still active');
  });
});

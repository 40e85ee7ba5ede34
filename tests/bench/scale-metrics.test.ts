import { describe, expect, it } from 'vitest';
import { auditClaims, pipelineMetrics } from '../../src/bench/scale-metrics.js';
import type { TeamEvent } from '../../src/core/events/schema.js';

/** Events of a board's log, with `seq` and a time `ms` after a fixed start. */
function log(...events: Array<Partial<TeamEvent> & { type: TeamEvent['type']; ms: number }>): TeamEvent[] {
  return events.map(({ ms, ...event }, i) => ({ team: 't', seq: i + 1, ts: new Date(Date.UTC(2026, 0, 1) + ms).toISOString(), ...event }) as TeamEvent);
}

describe('scale metrics', () => {
  it('overhead is the wall time less model, tool and queueing time (waiting for a busy claimer)', () => {
    const events = log(
      // The engineer is busy with pipeline 2's task until 300 ms.
      { type: 'task_claimed', pipeline: 2, task: 9, agent: 'eng', token: 1, takeover: false, ms: 0 },
      { type: 'task_posted', pipeline: 1, task: 1, agent: 'lead', subject: 's', stage: 'implementation', revision: 0, by: 'lead', ms: 100 },
      { type: 'task_completed', pipeline: 2, task: 9, agent: 'eng', result: null, ms: 300 },
      { type: 'task_claimed', pipeline: 1, task: 1, agent: 'eng', token: 1, takeover: false, ms: 320 },
      { type: 'model_call', pipeline: 1, task: 1, agent: 'eng', latencyMs: 200, ms: 540 } as never,
      { type: 'tool_call', pipeline: 1, task: 1, agent: 'eng', durationMs: 400, ms: 950 } as never,
      { type: 'task_completed', pipeline: 1, task: 1, agent: 'eng', result: null, ms: 980 },
      { type: 'pipeline_status', pipeline: 1, status: 'approved', ms: 1_000 },
    );
    const [metrics] = pipelineMetrics(events, [1]);
    expect(metrics).toEqual({ pipeline: 1, approved: true, wallMs: 900, modelMs: 200, toolMs: 400, queueMs: 200, overheadMs: 100, modelCalls: 1 });
  });

  it('a claimer handing its earlier task over (posting the next stage of that pipeline) is still busy: the wait is queueing, not overhead', () => {
    const events = log(
      { type: 'task_claimed', pipeline: 2, task: 9, agent: 'eng', token: 1, takeover: false, ms: 0 },
      { type: 'task_posted', pipeline: 1, task: 1, agent: 'lead', subject: 's', stage: 'implementation', revision: 0, by: 'lead', ms: 100 },
      { type: 'task_completed', pipeline: 2, task: 9, agent: 'eng', result: null, ms: 300 },
      // Pipeline 2's review, posted by the engineer: 40 ms of pipeline 2's overhead, and pipeline 1 waits.
      { type: 'task_posted', pipeline: 2, task: 10, agent: 'eng', subject: 's', stage: 'review', revision: 0, by: 'eng', ms: 340 },
      { type: 'task_claimed', pipeline: 1, task: 1, agent: 'eng', token: 1, takeover: false, ms: 360 },
      { type: 'model_call', pipeline: 1, task: 1, agent: 'eng', latencyMs: 200, ms: 580 } as never,
      { type: 'tool_call', pipeline: 1, task: 1, agent: 'eng', durationMs: 400, ms: 990 } as never,
      { type: 'task_completed', pipeline: 1, task: 1, agent: 'eng', result: null, ms: 995 },
      { type: 'pipeline_status', pipeline: 1, status: 'approved', ms: 1_000 },
    );
    const [metrics] = pipelineMetrics(events, [1]);
    // Waiting from 100 to 340 ms; the 20 ms from the post to the claim are the claim's, pipeline 1's overhead.
    expect(metrics).toMatchObject({ wallMs: 900, queueMs: 240, overheadMs: 60 });
  });

  it('counts a second claim under one token, a claim over an open one, and a second completion as double; an unfinished task as lost', () => {
    const events = log(
      { type: 'task_posted', pipeline: 1, task: 1, ms: 0 } as never,
      { type: 'task_claimed', pipeline: 1, task: 1, agent: 'a', token: 1, takeover: false, ms: 1 },
      { type: 'task_claimed', pipeline: 1, task: 1, agent: 'b', token: 1, takeover: false, ms: 2 },
      { type: 'task_completed', pipeline: 1, task: 1, agent: 'a', result: null, ms: 3 },
      { type: 'task_completed', pipeline: 1, task: 1, agent: 'b', result: null, ms: 4 },
      { type: 'task_posted', pipeline: 1, task: 2, ms: 5 } as never,
      { type: 'task_claimed', pipeline: 1, task: 2, agent: 'a', token: 1, takeover: false, ms: 6 },
      { type: 'task_claimed', pipeline: 1, task: 2, agent: 'b', token: 2, takeover: true, ms: 7 },
    );
    // Task 1: the same token twice (and over an open claim, the same event), then completed twice.
    expect(auditClaims(events, [1])).toEqual({ lostTasks: 1, notApproved: 1, doubleClaims: 3, takeovers: 1 });
  });

  it('a release and a claim again is one owner at a time, not a double claim', () => {
    const events = log(
      { type: 'task_posted', pipeline: 1, task: 1, ms: 0 } as never,
      { type: 'task_claimed', pipeline: 1, task: 1, agent: 'a', token: 1, takeover: false, ms: 1 },
      { type: 'task_released', pipeline: 1, task: 1, agent: 'a', kind: 'error', detail: 'x', token: 1, ms: 2 },
      { type: 'task_claimed', pipeline: 1, task: 1, agent: 'b', token: 2, takeover: false, ms: 3 },
      { type: 'task_completed', pipeline: 1, task: 1, agent: 'b', result: null, ms: 4 },
      { type: 'pipeline_status', pipeline: 1, status: 'approved', ms: 5 },
    );
    expect(auditClaims(events, [1])).toEqual({ lostTasks: 0, notApproved: 0, doubleClaims: 0, takeovers: 0 });
  });
});

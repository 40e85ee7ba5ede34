import type { TeamEvent } from '../core/events/schema.js';

/**
 * What the scale benchmark reads from a board's event log, as pure functions over its typed events.
 *
 * Overhead of a pipeline, precisely: its wall time — from its first `task_posted` to its
 * `pipeline_status: approved` — less
 *   - model time: the `latencyMs` of every `model_call` of the pipeline (here the loopback model's
 *     HTTP round trip, the SDK and the scripted model),
 *   - tool time: the `durationMs` of every `tool_call` of the pipeline (python, the linter and the
 *     sandbox, file tools, and the board writes tools make: save_requirement and the like),
 *   - queueing: for each of its tasks, the time it waited because the teammate that claimed it was
 *     still busy with an earlier task — from the task's `task_posted` to the end of that teammate's
 *     previous task, when that came later. A task ends (`task_completed`, `task_failed` or
 *     `task_released`) and is then handed over: the teammate posts the next stage's task itself. Until
 *     that post it is still busy with the earlier task, whose own pipeline counts the hand-over as its
 *     overhead; counting it again in the waiting pipeline would count it twice.
 * What is left is the runtime's own time: waking a teammate and claiming, building the prompt,
 * recording the outcome, advancing the pipeline (completing a stage and posting the next), the
 * board's and the log's writes, and scheduling on a loaded machine.
 */

export interface PipelineMetrics {
  pipeline: number;
  approved: boolean;
  wallMs: number;
  modelMs: number;
  toolMs: number;
  queueMs: number;
  overheadMs: number;
  modelCalls: number;
}

export interface ClaimAudit {
  /** Tasks of the bench's pipelines posted and never completed. */
  lostTasks: number;
  /** Pipelines never approved. */
  notApproved: number;
  /** Two claims of one task under one claim token, a claim while another was open (not a takeover), or a task completed twice. */
  doubleClaims: number;
  /** Claims that took a task over from a lease that had run out (legal, but a sign of overload). */
  takeovers: number;
}

const at = (event: TeamEvent) => Date.parse(event.ts);
const ENDS = new Set(['task_completed', 'task_failed', 'task_released']);

/** Each pipeline's wall, model, tool, queueing and overhead time, and its model calls. */
export function pipelineMetrics(events: readonly TeamEvent[], pipelines: readonly number[]): PipelineMetrics[] {
  const ordered = [...events].sort((a, b) => (a.seq ?? 0) - (b.seq ?? 0));
  const doneBy = busyUntil(ordered);
  return pipelines.map((pipeline) => {
    const own = ordered.filter((event) => event.pipeline === pipeline);
    const posted = own.filter((event) => event.type === 'task_posted');
    const approval = own.find((event) => event.type === 'pipeline_status' && event.status === 'approved');
    const start = posted.length ? at(posted[0]!) : Number.NaN;
    const wallMs = approval ? at(approval) - start : Number.NaN;
    let modelMs = 0;
    let toolMs = 0;
    let modelCalls = 0;
    for (const event of own) {
      if (event.type === 'model_call') {
        modelMs += event.latencyMs;
        modelCalls++;
      }
      if (event.type === 'tool_call') toolMs += event.durationMs;
    }
    let queueMs = 0;
    for (const post of posted) {
      const claim = own.find((event) => event.type === 'task_claimed' && event.task === post.task);
      if (!claim?.agent) continue;
      const claimedAt = at(claim);
      const freeAt = Math.max(...(doneBy.get(claim.agent) ?? []).filter((done) => done <= claimedAt), Number.NEGATIVE_INFINITY);
      queueMs += Math.max(0, Math.min(freeAt, claimedAt) - at(post));
    }
    return { pipeline, approved: Boolean(approval), wallMs, modelMs, toolMs, queueMs, overheadMs: wallMs - modelMs - toolMs - queueMs, modelCalls };
  });
}

/**
 * When each agent was done with each of its tasks, in order: the task's end, or the post of the task
 * that follows it when the agent posted one before its next claim (the hand-over).
 */
function busyUntil(ordered: readonly TeamEvent[]): Map<string, number[]> {
  const ends = new Map<string, number[]>();
  const handingOver = new Set<string>();
  for (const event of ordered) {
    const agent = event.type === 'task_posted' ? event.by : event.agent;
    if (!agent) continue;
    const own = ends.get(agent) ?? ends.set(agent, []).get(agent)!;
    if (ENDS.has(event.type)) {
      own.push(at(event));
      handingOver.add(agent);
    } else if (event.type === 'task_posted' && handingOver.delete(agent)) own[own.length - 1] = at(event);
    else if (event.type === 'task_claimed') handingOver.delete(agent);
  }
  return ends;
}

/** Lost and double claims of the bench's pipelines, from the log alone. */
export function auditClaims(events: readonly TeamEvent[], pipelines: readonly number[]): ClaimAudit {
  const mine = new Set(pipelines);
  const ordered = [...events].filter((event) => event.pipeline != null && mine.has(event.pipeline)).sort((a, b) => (a.seq ?? 0) - (b.seq ?? 0));
  const posted = new Set<number>();
  const completed = new Map<number, number>();
  const tokens = new Map<string, number>();
  const open = new Map<number, string>();
  let doubleClaims = 0;
  let takeovers = 0;
  for (const event of ordered) {
    if (event.task == null) continue;
    if (event.type === 'task_posted') posted.add(event.task);
    if (event.type === 'task_claimed') {
      const key = `${event.task}:${event.token}`;
      tokens.set(key, (tokens.get(key) ?? 0) + 1);
      if (tokens.get(key)! > 1) doubleClaims++;
      if (event.takeover) takeovers++;
      else if (open.has(event.task)) doubleClaims++;
      open.set(event.task, event.agent ?? '');
    }
    if (ENDS.has(event.type)) open.delete(event.task);
    if (event.type === 'task_completed') {
      completed.set(event.task, (completed.get(event.task) ?? 0) + 1);
      if (completed.get(event.task)! > 1) doubleClaims++;
    }
  }
  const approved = new Set(ordered.filter((event) => event.type === 'pipeline_status' && event.status === 'approved').map((event) => event.pipeline));
  return {
    lostTasks: [...posted].filter((task) => !completed.has(task)).length,
    notApproved: pipelines.filter((pipeline) => !approved.has(pipeline)).length,
    doubleClaims,
    takeovers,
  };
}

import type { TeamEvent } from '../events/schema.js';
import { type AttemptEnd, attemptEvent, attemptOutcome, type ContentPolicy, chatAttributes, content, type EventOf, toolAttributes, where } from './attributes.js';
import { attemptSpanId, pipelineSpanId, traceIdOf } from './ids.js';
import type { SpanEventRecord, SpanRecord } from './span-record.js';

/**
 * Events → finished spans, in one thread or process, from the events it emits itself:
 *
 * - `pipeline <n>` (root of the pipeline's trace): from the pipeline's first task_posted to its final
 *   pipeline_status, exported by whoever emits that status;
 * - `invoke_agent <role>`: one claim of a task, task_claimed → task_released/completed/failed
 *   (or cancelled), exported by the claimant — or, for a claimant found dead, by the process that
 *   releases its task (`owner_dead`);
 * - `chat <model>` and `execute_tool <tool>`: each model and tool call, under the attempt it belongs to.
 *
 * Spans are built after the fact with the ids of ids.ts, so the processes need share nothing. What
 * this process did not see (when a pipeline started, a dead claimant's claim) comes back as a
 * `Lookup` for the caller to answer from the board's log.
 */

export type ClaimEvent = EventOf<'task_claimed'>;
export type PipelineEnd = EventOf<'pipeline_status'>;

export type Lookup =
  /** When the pipeline began (its first task_posted); `fallbackMs` if nothing says. */
  | { lookup: 'pipeline_start'; end: PipelineEnd; fallbackMs: number }
  /** The claim a release of a dead claimant's task ends. */
  | { lookup: 'claim'; end: EventOf<'task_released'> };

export type Output = SpanRecord | Lookup;

export interface Attempt {
  claim: ClaimEvent;
  events: SpanEventRecord[];
  model?: { provider: string; model: string };
}

const FINAL_STATUSES = new Set(['approved', 'failed', 'cancelled']);
/** Bounds on what is remembered about pipelines another process may end (one number each). */
const MAX_REMEMBERED = 10_000;

export class SpanAssembler {
  private readonly attempts = new Map<string, Attempt>();
  /** The earliest event this process saw of each pipeline, a fallback start for its span. */
  private readonly firstSeen = new Map<string, number>();
  private readonly ended = new Set<string>();

  constructor(private readonly policy: ContentPolicy) {}

  accept(event: TeamEvent): Output[] {
    if (event.pipeline != null) this.see(event.team, event.pipeline, Date.parse(event.ts));
    switch (event.type) {
      case 'task_claimed':
        return this.claim(event);
      case 'task_released':
      case 'task_completed':
      case 'task_failed':
      case 'task_cancelled':
        return this.endAttempt(event);
      case 'model_call':
        return [this.call(event, `chat ${event.model}`, 'client', event.latencyMs, chatAttributes(event, this.policy))];
      case 'tool_call': {
        const span = this.call(event, `execute_tool ${event.tool}`, 'internal', event.durationMs, toolAttributes(event, this.policy));
        if (event.outcome !== 'ok') span.status = { code: 'error', message: event.outcome };
        return [span];
      }
      case 'pipeline_status':
        return this.endPipeline(event);
      default: {
        const record = attemptEvent(event, this.policy);
        if (record && event.task != null) this.attempts.get(key(event.team, event.task))?.events.push(record);
        return [];
      }
    }
  }

  /** The `pipeline <n>` span, once its start is known. */
  pipelineSpan(end: PipelineEnd, startMs: number): SpanRecord {
    const pipeline = end.pipeline!;
    const failed = end.status === 'failed';
    return {
      name: `pipeline ${pipeline}`,
      kind: 'internal',
      traceId: traceIdOf(end.team, pipeline, null),
      spanId: pipelineSpanId(end.team, pipeline),
      parentSpanId: null,
      ...times(startMs, Date.parse(end.ts)),
      attributes: {
        'gen_ai.operation.name': 'invoke_workflow',
        'gen_ai.workflow.name': 'pipeline',
        'autoteam.team': end.team,
        'autoteam.pipeline.id': pipeline,
        'autoteam.pipeline.status': end.status,
        ...(failed ? { 'error.type': 'pipeline_failed' } : {}),
      },
      // Its reason may quote the model (a fail_task's words): content, as a task's reason is.
      status: failed ? { code: 'error', message: content(this.policy, end.reason) ?? 'pipeline failed' } : { code: 'unset' },
      events: [],
    };
  }

  /** The `invoke_agent <role>` span of one claim, ended by `end`. */
  attemptSpan(attempt: Attempt, end: AttemptEnd): SpanRecord {
    const { claim } = attempt;
    const task = claim.task!;
    const role = claim.role ?? claim.agent ?? 'agent';
    const outcome = attemptOutcome(end, this.policy);
    return {
      name: `invoke_agent ${role}`,
      kind: 'internal',
      traceId: traceIdOf(claim.team, claim.pipeline, task),
      spanId: attemptSpanId(claim.team, task, claim.token),
      parentSpanId: claim.pipeline != null ? pipelineSpanId(claim.team, claim.pipeline) : null,
      ...times(Date.parse(claim.ts), Date.parse(end.ts)),
      attributes: {
        'gen_ai.operation.name': 'invoke_agent',
        'gen_ai.agent.name': role,
        ...(claim.agent ? { 'gen_ai.agent.id': claim.agent } : {}),
        ...(attempt.model ? { 'gen_ai.provider.name': attempt.model.provider, 'gen_ai.request.model': attempt.model.model } : {}),
        ...where(claim),
        'autoteam.claim.token': claim.token,
        'autoteam.claim.takeover': claim.takeover,
        ...outcome.attributes,
      },
      status: outcome.status,
      events: attempt.events,
    };
  }

  private claim(event: ClaimEvent): Output[] {
    if (event.task == null) return [];
    const id = key(event.team, event.task);
    const previous = this.attempts.get(id);
    if (previous?.claim.token === event.token) return [];
    this.attempts.set(id, { claim: event, events: [] });
    // A claim this process held and never saw end is over now that it claims the task again.
    return previous ? [this.attemptSpan(previous, event)] : [];
  }

  private endAttempt(event: Exclude<AttemptEnd, ClaimEvent>): Output[] {
    if (event.task == null) return [];
    const id = key(event.team, event.task);
    const attempt = this.attempts.get(id);
    if (attempt) {
      this.attempts.delete(id);
      return [this.attemptSpan(attempt, event)];
    }
    // Someone else's claim: its claimant exports it — unless it is dead, and this process says so.
    if (event.type === 'task_released' && event.kind === 'owner_dead') {
      const claim = claimOf(event);
      return [claim ? this.attemptSpan({ claim, events: [] }, event) : { lookup: 'claim', end: event }];
    }
    return [];
  }

  private call(event: EventOf<'model_call' | 'tool_call'>, name: string, kind: SpanRecord['kind'], durationMs: number, attributes: SpanRecord['attributes']): SpanRecord {
    const endMs = Date.parse(event.ts);
    const attempt = event.task != null ? this.attempts.get(key(event.team, event.task)) : undefined;
    if (attempt && event.type === 'model_call') attempt.model = { provider: event.provider, model: event.model };
    // Under its attempt; else under its pipeline; a general task's call without a claim here is a
    // root of the task's trace, and a call outside any task (the lead's own turns) a trace of its own.
    const parentSpanId = attempt
      ? attemptSpanId(event.team, attempt.claim.task!, attempt.claim.token)
      : event.pipeline != null
        ? pipelineSpanId(event.team, event.pipeline)
        : null;
    return {
      name,
      kind,
      traceId: traceIdOf(event.team, attempt?.claim.pipeline ?? event.pipeline, event.task),
      spanId: null,
      parentSpanId,
      ...times(endMs - Math.max(0, durationMs), endMs),
      attributes,
      status: { code: 'unset' },
      events: [],
    };
  }

  private endPipeline(event: PipelineEnd): Output[] {
    if (event.pipeline == null || !FINAL_STATUSES.has(event.status)) return [];
    const id = key(event.team, event.pipeline);
    if (this.ended.has(id)) return [];
    remember(this.ended, id);
    const fallbackMs = this.firstSeen.get(id) ?? Date.parse(event.ts);
    this.firstSeen.delete(id);
    const startedAt = startedAtOf(event);
    return [startedAt !== null ? this.pipelineSpan(event, startedAt) : { lookup: 'pipeline_start', end: event, fallbackMs }];
  }

  private see(team: string, pipeline: number, ms: number): void {
    const id = key(team, pipeline);
    const known = this.firstSeen.get(id);
    if (known === undefined) {
      if (this.firstSeen.size >= MAX_REMEMBERED) this.firstSeen.delete(this.firstSeen.keys().next().value!);
      this.firstSeen.set(id, ms);
    } else if (ms < known) this.firstSeen.set(id, ms);
  }
}

function key(team: string, id: number): string {
  return `${team}\u0000${id}`;
}

function remember(set: Set<string>, id: string): void {
  if (set.size >= MAX_REMEMBERED) set.delete(set.values().next().value!);
  set.add(id);
}

function times(startMs: number, endMs: number): { startMs: number; endMs: number } {
  return { startMs: Math.min(startMs, endMs), endMs };
}

/** `startedAt` on a final pipeline_status: the pipeline's first task_posted time, when the runtime adds it. */
function startedAtOf(event: PipelineEnd): number | null {
  const value = (event as { startedAt?: unknown }).startedAt;
  const ms = typeof value === 'string' ? Date.parse(value) : Number.NaN;
  return Number.isNaN(ms) ? null : ms;
}

/** The claim an owner_dead release ends, when the release carries it (`token`, `claimedAt`). */
function claimOf(end: EventOf<'task_released'>): ClaimEvent | null {
  const { token, claimedAt } = end as { token?: unknown; claimedAt?: unknown };
  if (typeof token !== 'number' || typeof claimedAt !== 'string' || Number.isNaN(Date.parse(claimedAt))) return null;
  return { type: 'task_claimed', ts: claimedAt, team: end.team, pipeline: end.pipeline, task: end.task, agent: end.agent, role: end.role, token, takeover: false };
}

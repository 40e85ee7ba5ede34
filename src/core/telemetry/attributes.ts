import type { TeamEvent } from '../events/schema.js';
import { redact } from '../trace/redact.js';
import type { Attributes, SpanEventRecord, SpanRecord } from './span-record.js';

/**
 * Events → span attributes, named as the OpenTelemetry GenAI semantic conventions name them
 * (`gen_ai.*`: operation, provider, model, usage, finish reasons, agent, tool), and `autoteam.*` for
 * the rest. What a model or a person wrote (model text, tool arguments and summaries, task results,
 * questions and answers) is content: only with `capture`, redacted again, and cut.
 */

export type EventOf<T extends TeamEvent['type']> = Extract<TeamEvent, { type: T }>;

export interface ContentPolicy {
  capture: boolean;
  /** Secret values of the environment, redacted from anything exported. */
  secrets: readonly string[];
}

const MAX_CONTENT = 16_384;

export function content(policy: ContentPolicy, text: string | null | undefined): string | undefined {
  if (!policy.capture || !text) return undefined;
  const clean = redact(text, policy.secrets);
  return clean.length > MAX_CONTENT ? `${clean.slice(0, MAX_CONTENT)}…` : clean;
}

/** Where an event happened: team, pipeline, task, teammate. */
export function where(event: TeamEvent): Attributes {
  const out: Attributes = { 'autoteam.team': event.team };
  if (event.pipeline != null) out['autoteam.pipeline.id'] = event.pipeline;
  if (event.task != null) out['autoteam.task.id'] = event.task;
  if (event.agent) out['autoteam.agent'] = event.agent;
  return out;
}

/** The conventions' finish reasons for the output message (the span keeps the provider's own). */
const FINISH: Record<string, string> = { end_turn: 'stop', stop_sequence: 'stop', max_tokens: 'length', tool_use: 'tool_call', refusal: 'content_filter' };

export function chatAttributes(event: EventOf<'model_call'>, policy: ContentPolicy): Attributes {
  // The conventions count cached input inside `input_tokens`; Anthropic reports it apart, OpenAI inside.
  const cached = event.provider === 'anthropic' ? event.cacheReadTokens + event.cacheWriteTokens : 0;
  const out: Attributes = {
    'gen_ai.operation.name': 'chat',
    'gen_ai.provider.name': event.provider,
    'gen_ai.request.model': event.model,
    'gen_ai.usage.input_tokens': event.inputTokens + cached,
    'gen_ai.usage.output_tokens': event.outputTokens,
    'gen_ai.usage.cache_read.input_tokens': event.cacheReadTokens,
    'gen_ai.usage.cache_creation.input_tokens': event.cacheWriteTokens,
    'gen_ai.response.finish_reasons': [event.stopReason],
    'autoteam.model.purpose': event.purpose,
    ...where(event),
  };
  if (event.costUsd != null) out['autoteam.cost_usd'] = event.costUsd;
  const text = content(policy, event.text);
  if (text) {
    const message = { role: 'assistant', parts: [{ type: 'text', content: text }], finish_reason: FINISH[event.stopReason] ?? event.stopReason };
    out['gen_ai.output.messages'] = JSON.stringify([message]);
  }
  return out;
}

export function toolAttributes(event: EventOf<'tool_call'>, policy: ContentPolicy): Attributes {
  const out: Attributes = {
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.name': event.tool,
    'gen_ai.tool.type': 'function',
    'autoteam.tool.outcome': event.outcome,
    ...where(event),
  };
  if (event.outcome !== 'ok') out['error.type'] = event.outcome;
  const args = content(policy, event.args);
  if (args) out['gen_ai.tool.call.arguments'] = args;
  const summary = content(policy, event.summary);
  if (summary) out['autoteam.tool.summary'] = summary;
  return out;
}

/** What ends a task attempt: the task's own end, or another claim of the same task in this process. */
export type AttemptEnd = EventOf<'task_released' | 'task_completed' | 'task_failed' | 'task_cancelled' | 'task_claimed'>;

/** Releases that mean the attempt went wrong (the others are a pause: shutdown, a switch, a wait). */
const FAILED_RELEASES = new Set(['error', 'lease_lost', 'owner_dead']);

export function attemptOutcome(end: AttemptEnd, policy: ContentPolicy): Pick<SpanRecord, 'attributes' | 'status'> {
  switch (end.type) {
    case 'task_completed': {
      const attributes: Attributes = { 'autoteam.task.outcome': 'completed' };
      if (end.signal) attributes['autoteam.task.signal'] = end.signal;
      const result = content(policy, end.result);
      if (result) attributes['autoteam.task.result'] = result;
      return { attributes, status: { code: 'unset' } };
    }
    case 'task_failed':
      return {
        attributes: { 'autoteam.task.outcome': 'failed', 'error.type': 'task_failed' },
        status: { code: 'error', message: content(policy, end.reason) ?? 'task failed' },
      };
    case 'task_released': {
      const attributes: Attributes = { 'autoteam.task.outcome': 'released', 'autoteam.release.kind': end.kind };
      if (end.attempt !== undefined) attributes['autoteam.release.attempt'] = end.attempt;
      if (!FAILED_RELEASES.has(end.kind)) return { attributes, status: { code: 'unset' } };
      attributes['error.type'] = end.kind;
      return { attributes, status: { code: 'error', message: redact(end.detail, policy.secrets) || end.kind } };
    }
    case 'task_cancelled':
      return { attributes: { 'autoteam.task.outcome': 'cancelled', 'autoteam.cancelled.by': end.by }, status: { code: 'unset' } };
    case 'task_claimed':
      return { attributes: { 'autoteam.task.outcome': 'claimed_again' }, status: { code: 'unset' } };
  }
}

/** Things that happen during an attempt, as span events on its `invoke_agent` span. */
export function attemptEvent(event: TeamEvent, policy: ContentPolicy): SpanEventRecord | null {
  const attributes: Attributes = {};
  const put = (key: string, value: string | undefined) => {
    if (value !== undefined) attributes[key] = value;
  };
  switch (event.type) {
    case 'question_asked':
      put('autoteam.question.id', event.questionId);
      put('autoteam.question.text', content(policy, event.question));
      break;
    case 'question_answered':
      put('autoteam.question.id', event.questionId);
      put('autoteam.question.answered_by', event.by);
      put('autoteam.question.answer', content(policy, event.answer));
      break;
    case 'question_withdrawn':
      put('autoteam.question.id', event.questionId);
      break;
    case 'criterion_added':
      put('autoteam.criterion.id', event.id);
      put('autoteam.criterion.text', content(policy, event.criterion));
      break;
    case 'check_ran':
      Object.assign(attributes, { 'autoteam.check.id': event.id, 'autoteam.check.ok': event.ok, 'autoteam.check.language': event.language });
      if (event.exitCode !== null) attributes['autoteam.check.exit_code'] = event.exitCode;
      break;
    case 'review_verdict':
      Object.assign(attributes, { 'autoteam.review.verdict': event.verdict, 'autoteam.review.revision': event.revision, 'autoteam.review.issues': event.issues.length });
      break;
    case 'hook_decision':
      Object.assign(attributes, { 'autoteam.hook.event': event.hook, 'autoteam.hook.decision': event.decision, 'autoteam.hook.duration_ms': event.durationMs });
      if (event.exitCode !== null) attributes['autoteam.hook.exit_code'] = event.exitCode;
      break;
    default:
      return null;
  }
  return { name: `autoteam.${event.type}`, timeMs: Date.parse(event.ts), attributes };
}

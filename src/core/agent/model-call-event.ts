import type { EventInput } from '../events/schema.js';
import { costOfCall } from '../model/factory.js';
import type { PriceTable } from '../model/pricing.js';
import type { ModelClient, ModelResponse } from '../model/types.js';
import type { Trace } from '../trace/trace.js';

/** Who made a call, for its trace record and its event. */
export interface Caller {
  agent: string;
  role: string;
  stage: string | null;
  task: number | null;
  pipeline: number | null;
}

/**
 * Tells one model call — a turn of the loop, or the summary a compaction asks for — where the runtime
 * keeps them: the trace (a run's summary counts calls from it) and the event stream (the spend,
 * `events`, OpenTelemetry). Every call is told, so each of them counts them all. `text` is already redacted.
 */
export function tellModelCall(
  call: { model: ModelClient; response: Pick<ModelResponse, 'usage' | 'stopReason'>; latencyMs: number; text: string; purpose: 'turn' | 'compaction' | 'simulated_user'; prices?: PriceTable },
  by: Caller,
  to: { trace?: Trace; events?: { emit(input: EventInput): unknown } },
): void {
  const { model, response, latencyMs } = call;
  const { inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens } = response.usage;
  const tokens = { inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens };
  to.trace?.write({ kind: 'model_call', agent: by.agent, role: by.role, stage: by.stage, task: by.task, stopReason: response.stopReason, ...tokens, ms: latencyMs, model: model.id });
  to.events?.emit({
    type: 'model_call',
    pipeline: by.pipeline,
    task: by.task,
    agent: by.agent,
    role: by.role,
    provider: model.provider ?? 'unknown',
    model: model.id,
    purpose: call.purpose,
    ...tokens,
    costUsd: costOfCall(model, response.usage, call.prices),
    latencyMs,
    stopReason: response.stopReason,
    text: call.text,
  });
}

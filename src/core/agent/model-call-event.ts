import type { EventInput } from '../events/schema.js';
import { costOfCall } from '../model/factory.js';
import type { PriceTable } from '../model/pricing.js';
import type { ModelClient, ModelResponse } from '../model/types.js';

/** Who made a call, for its event. */
export interface Caller {
  agent: string;
  role: string;
  task: number | null;
  pipeline: number | null;
}

/**
 * One model call as the event stream tells it: a turn of the loop, or the summary a compaction asks
 * for. Every call is one, so what reads the stream (the spend, `events`, OpenTelemetry) counts them all.
 * `text` is already redacted.
 */
export function modelCallEvent(
  call: { model: ModelClient; response: Pick<ModelResponse, 'usage' | 'stopReason'>; latencyMs: number; text: string; purpose: 'turn' | 'compaction'; prices?: PriceTable },
  by: Caller,
): EventInput {
  const { model, response } = call;
  return {
    type: 'model_call',
    pipeline: by.pipeline,
    task: by.task,
    agent: by.agent,
    role: by.role,
    provider: model.provider ?? 'unknown',
    model: model.id,
    purpose: call.purpose,
    inputTokens: response.usage.inputTokens,
    outputTokens: response.usage.outputTokens,
    cacheReadTokens: response.usage.cacheReadTokens,
    cacheWriteTokens: response.usage.cacheWriteTokens,
    costUsd: costOfCall(model, response.usage, call.prices),
    latencyMs: call.latencyMs,
    stopReason: response.stopReason,
    text: call.text,
  };
}

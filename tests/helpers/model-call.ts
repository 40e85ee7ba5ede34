import type { EventInput } from '../../src/core/events/schema.js';

/** A model call as a teammate's thread logs it (what a worker of another process leaves in the log). */
export function modelCallEvent(agent: string, role: string, inputTokens: number): EventInput {
  return {
    type: 'model_call',
    agent,
    role,
    pipeline: null,
    task: null,
    provider: 'anthropic',
    model: 'claude-sonnet-4-5',
    purpose: 'turn',
    inputTokens,
    outputTokens: 20,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    costUsd: null,
    latencyMs: 5,
    stopReason: 'tool_use',
    text: '',
  };
}

import { afterEach, describe, expect, it } from 'vitest';
import { backoffMs } from '../../src/core/agent/backoff.js';
import { redactEvent } from '../../src/core/agent/teammate-events.js';
import { secretValues } from '../../src/core/trace/redact.js';

describe('backoffMs', () => {
  it('doubles from the base per failed attempt, within ±25% jitter, and never passes the cap', () => {
    const low = () => 0;
    const high = () => 0.999_999;
    expect(backoffMs(1, 1_000, 60_000, low)).toBe(1_000); // 750 is raised to the base
    expect(backoffMs(2, 1_000, 60_000, low)).toBe(1_500);
    expect(backoffMs(3, 1_000, 60_000, high)).toBe(5_000);
    expect(backoffMs(4, 1_000, 60_000, () => 0.5)).toBe(8_000);
    expect(backoffMs(20, 1_000, 60_000, high)).toBe(60_000);
    expect(backoffMs(20, 1_000, 60_000, low)).toBe(45_000);
  });
});

describe('redactEvent', () => {
  const saved = process.env.AUTOTEAM_TEST_API_KEY;
  afterEach(() => {
    if (saved === undefined) delete process.env.AUTOTEAM_TEST_API_KEY;
    else process.env.AUTOTEAM_TEST_API_KEY = saved;
  });

  it('removes secret values from every text a teammate tells its host', () => {
    const secret = 'sk-test-0123456789abcdef';
    process.env.AUTOTEAM_TEST_API_KEY = secret;
    const secrets = secretValues();
    const said = [
      redactEvent({ type: 'activity', name: 'e1', role: 'engineer', task: 1, text: `bash: echo ${secret}` }, secrets),
      redactEvent({ type: 'status', name: 'e1', role: 'engineer', status: 'idle', task: null, reason: `key ${secret}` }, secrets),
      redactEvent({ type: 'error', name: 'e1', error: { code: 'MODEL_AUTH', message: `bad key ${secret}` } }, secrets),
      redactEvent({ type: 'exit', name: 'e1', reason: `model error: ${secret}`, why: 'model_error' }, secrets),
      redactEvent({ type: 'says', name: 'e1', role: 'engineer', task: 1, text: `I will export KEY=${secret} first.` }, secrets),
    ];
    const text = JSON.stringify(said);
    expect(text).not.toContain(secret);
    expect(text.match(/\[redacted\]/g)).toHaveLength(5);
    const usage = { type: 'usage', name: 'e1', role: 'engineer', model: 'm', usage: { inputTokens: 1, outputTokens: 2, cacheReadTokens: 0, cacheWriteTokens: 0 } } as const;
    expect(redactEvent(usage, secrets)).toBe(usage);
  });
});

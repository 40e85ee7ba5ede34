/** Events → spans as data: the cases the pipeline test does not walk through. */
import { describe, expect, it } from 'vitest';
import type { TeamEvent } from '../../src/core/events/schema.js';
import { type Output, SpanAssembler } from '../../src/core/telemetry/assembler.js';
import { attemptSpanId, pipelineSpanId, traceIdOf } from '../../src/core/telemetry/ids.js';
import type { SpanRecord } from '../../src/core/telemetry/span-record.js';

const T0 = Date.parse('2026-03-01T10:00:00.000Z');
const at = (seconds: number) => new Date(T0 + seconds * 1000).toISOString();
const ev = (event: Record<string, unknown>) => ({ team: 't', ...event }) as TeamEvent;
const spans = (outputs: Output[]) => outputs.filter((output): output is SpanRecord => !('lookup' in output));
const quiet = () => new SpanAssembler({ capture: false, secrets: [] });

const claim = (task: number, token: number, seconds: number, extra: object = {}) =>
  ev({ type: 'task_claimed', ts: at(seconds), pipeline: 3, task, agent: 'eng', role: 'engineer', token, takeover: false, ...extra });
const modelCall = (task: number | null, seconds: number, extra: object = {}) =>
  ev({
    type: 'model_call',
    ts: at(seconds),
    task,
    agent: 'eng',
    provider: 'anthropic',
    model: 'm',
    purpose: 'turn',
    inputTokens: 10,
    outputTokens: 5,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    costUsd: null,
    latencyMs: 1000,
    stopReason: 'end_turn',
    text: 'hello, my key is sk-test-0123456789',
    ...extra,
  });

describe('SpanAssembler', () => {
  it('gives the same ids in every process, from the events alone', () => {
    const a = quiet();
    const b = quiet();
    a.accept(claim(9, 4, 0));
    b.accept(claim(9, 4, 0));
    const end = ev({ type: 'task_completed', ts: at(5), pipeline: 3, task: 9, agent: 'eng', result: null });
    const [fromA] = spans(a.accept(end));
    const [fromB] = spans(b.accept(end));
    expect(fromA).toEqual(fromB);
    expect(fromA).toMatchObject({ traceId: traceIdOf('t', 3, 9), spanId: attemptSpanId('t', 9, 4), parentSpanId: pipelineSpanId('t', 3) });
    // Another team, pipeline, task or claim gets other ids.
    expect(new Set([traceIdOf('t', 3, null), traceIdOf('u', 3, null), traceIdOf('t', 4, null), traceIdOf('t', null, 3)]).size).toBe(4);
    expect(new Set([attemptSpanId('t', 9, 4), attemptSpanId('t', 9, 5), attemptSpanId('t', 10, 4), pipelineSpanId('t', 9)]).size).toBe(4);
  });

  it('ends an attempt this process never saw end when it claims the task again', () => {
    const assembler = quiet();
    assembler.accept(claim(9, 1, 0));
    const [first] = spans(assembler.accept(claim(9, 2, 7)));
    expect(first).toMatchObject({ spanId: attemptSpanId('t', 9, 1), startMs: T0, endMs: T0 + 7000, attributes: { 'autoteam.task.outcome': 'claimed_again' } });
    expect(assembler.accept(claim(9, 2, 7))).toEqual([]);
  });

  it("leaves another process's claim to it, except a dead claimant's, which it asks the log for", () => {
    const assembler = quiet();
    const released = (kind: string, extra: object = {}) => ev({ type: 'task_released', ts: at(9), pipeline: 3, task: 9, agent: 'lead', kind, detail: 'gone', ...extra });
    expect(assembler.accept(released('lead'))).toEqual([]);
    expect(assembler.accept(ev({ type: 'task_failed', ts: at(9), pipeline: 3, task: 9, reason: 'x' }))).toEqual([]);
    expect(assembler.accept(released('owner_dead'))).toEqual([{ lookup: 'claim', end: released('owner_dead') }]);
    // With the claim on the release itself, nothing needs reading.
    const [span] = spans(assembler.accept(released('owner_dead', { token: 2, claimedAt: at(1), role: 'engineer' })));
    expect(span).toMatchObject({ name: 'invoke_agent engineer', spanId: attemptSpanId('t', 9, 2), startMs: T0 + 1000, status: { code: 'error', message: 'gone' } });
  });

  it('ends a pipeline once, from startedAt when the status carries it, else by asking the log', () => {
    const assembler = quiet();
    assembler.accept(claim(9, 1, 4));
    const status = (extra: object = {}) => ev({ type: 'pipeline_status', ts: at(60), pipeline: 3, status: 'failed', reason: 'budget spent', ...extra });
    expect(assembler.accept(ev({ type: 'pipeline_status', ts: at(50), pipeline: 3, status: 'active' }))).toEqual([]);
    expect(assembler.accept(status())).toEqual([{ lookup: 'pipeline_start', end: status(), fallbackMs: T0 + 4000 }]);
    expect(assembler.accept(status())).toEqual([]);
    const [span] = spans(quiet().accept(status({ pipeline: 5, startedAt: at(2) })));
    expect(span).toMatchObject({
      name: 'pipeline 5',
      traceId: traceIdOf('t', 5, null),
      spanId: pipelineSpanId('t', 5),
      parentSpanId: null,
      startMs: T0 + 2000,
      endMs: T0 + 60_000,
      // Its reason may quote the model: content, kept out unless asked for.
      status: { code: 'error', message: 'pipeline failed' },
    });
    const [told] = spans(new SpanAssembler({ capture: true, secrets: ['sk-test-0123456789'] }).accept(status({ pipeline: 6, startedAt: at(2), reason: 'key was sk-test-0123456789' })));
    expect(told!.status).toEqual({ code: 'error', message: 'key was [redacted]' });
  });

  it('puts calls under their attempt, else their pipeline; a general task is a trace of its own; the lead’s own calls are roots', () => {
    const assembler = quiet();
    assembler.accept(claim(9, 1, 0, { pipeline: null }));
    const [underAttempt] = spans(assembler.accept(modelCall(9, 3)));
    expect(underAttempt).toMatchObject({ traceId: traceIdOf('t', null, 9), parentSpanId: attemptSpanId('t', 9, 1), startMs: T0 + 2000, endMs: T0 + 3000, kind: 'client' });
    const [underPipeline] = spans(assembler.accept(modelCall(11, 3, { pipeline: 3 })));
    expect(underPipeline).toMatchObject({ traceId: traceIdOf('t', 3, null), parentSpanId: pipelineSpanId('t', 3) });
    const [lead] = spans(assembler.accept(modelCall(null, 3, { agent: 'lead' })));
    expect(lead).toMatchObject({ traceId: null, spanId: null, parentSpanId: null });
    const [attempt] = spans(assembler.accept(ev({ type: 'task_completed', ts: at(4), task: 9, result: 'done' })));
    expect(attempt).toMatchObject({ traceId: traceIdOf('t', null, 9), parentSpanId: null, attributes: { 'gen_ai.provider.name': 'anthropic', 'gen_ai.request.model': 'm' } });
  });

  it('exports content only when asked, with secrets redacted again', () => {
    const [plain] = spans(quiet().accept(modelCall(null, 1)));
    expect(plain!.attributes['gen_ai.output.messages']).toBeUndefined();
    const assembler = new SpanAssembler({ capture: true, secrets: ['sk-test-0123456789'] });
    const [chat] = spans(assembler.accept(modelCall(null, 1)));
    expect(JSON.parse(String(chat!.attributes['gen_ai.output.messages']))).toEqual([
      { role: 'assistant', parts: [{ type: 'text', content: 'hello, my key is [redacted]' }], finish_reason: 'stop' },
    ]);
    const [tool] = spans(
      assembler.accept(ev({ type: 'tool_call', ts: at(2), tool: 'bash', args: '{"cmd":"echo sk-test-0123456789"}', outcome: 'ok', durationMs: 5, summary: 'ran' })),
    );
    expect(tool!.attributes).toMatchObject({ 'gen_ai.tool.call.arguments': '{"cmd":"echo [redacted]"}', 'autoteam.tool.summary': 'ran' });
  });
});

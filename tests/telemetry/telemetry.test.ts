/**
 * startTelemetry as the runtime uses it: off costs nothing, content is exported only when asked
 * (and never a secret), a collector that refuses spans is reported once, and a dead teammate's
 * attempt is exported by the process that releases its task, from the board's log.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileEventLog } from '../../src/core/events/file-log.js';
import type { TeamEvent } from '../../src/core/events/schema.js';
import { attemptSpanId, pipelineSpanId, traceIdOf } from '../../src/core/telemetry/ids.js';
import { scrubbed } from '../../src/core/telemetry/otlp-writer.js';
import type { SpanRecord } from '../../src/core/telemetry/span-record.js';
import { startTelemetry } from '../../src/core/telemetry/telemetry.js';
import { tempRoot } from '../helpers/board-spawn.js';
import { OtlpReceiver } from '../helpers/otlp-receiver.js';
import { runTelemetryJob } from '../helpers/telemetry-job.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '..', '..');
const T0 = Date.parse('2026-03-01T10:00:00.000Z');
const at = (seconds: number) => new Date(T0 + seconds * 1000).toISOString();

let receiver: OtlpReceiver;
let root: string;
beforeEach(async () => {
  receiver = await OtlpReceiver.start();
  root = tempRoot('autoteam-otel-');
});
afterEach(async () => {
  await receiver.close();
  fs.rmSync(root, { recursive: true, force: true });
});

describe('the span writer', () => {
  it('redacts the environment\'s secrets from every text a span carries, however it was built', () => {
    const secret = 'sk-ant-api03-last-gate-secret';
    const record: SpanRecord = {
      name: `chat ${secret}`,
      kind: 'internal',
      traceId: null,
      spanId: null,
      parentSpanId: null,
      startMs: 0,
      endMs: 1,
      attributes: { a: `x ${secret}`, n: 3, list: [`y ${secret}`, 'z'], ok: true },
      status: { code: 'error', message: `failed: ${secret}` },
      events: [{ name: 'e', timeMs: 0, attributes: { b: secret } }],
    };
    const clean = scrubbed(record, [secret]);
    expect(JSON.stringify(clean)).not.toContain(secret);
    expect(clean).toMatchObject({ name: 'chat [redacted]', attributes: { a: 'x [redacted]', n: 3, list: ['y [redacted]', 'z'], ok: true }, status: { message: 'failed: [redacted]' }, events: [{ attributes: { b: '[redacted]' } }] });
  });
});

describe('startTelemetry', () => {
  it('without an endpoint, or with the SDK disabled, is null and loads no OpenTelemetry module', async () => {
    const probe = path.join(repoRoot, 'tests', 'helpers', 'telemetry-off-probe.ts');
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', probe, receiver.url], { cwd: repoRoot });
    const seen = JSON.parse(stdout);
    expect(seen).toMatchObject({ none: true, afterNone: 0, disabled: true, afterDisabled: 0, on: true });
    // The probe sees them once traces are on: its zero above means something.
    expect(seen.afterOn).toBeGreaterThan(0);
  });

  it('exports model text and tool arguments only when asked, with secrets redacted', async () => {
    const secret = 'sk-ant-api03-telemetry-test-secret';
    const events = [
      { type: 'task_claimed', pipeline: 1, task: 1, agent: 'eng', role: 'engineer', ts: at(0), token: 1, takeover: false },
      {
        type: 'model_call',
        pipeline: 1,
        task: 1,
        agent: 'eng',
        ts: at(2),
        provider: 'anthropic',
        model: 'claude-sonnet-5-5',
        purpose: 'turn',
        inputTokens: 5,
        outputTokens: 5,
        cacheReadTokens: 0,
        cacheWriteTokens: 0,
        costUsd: null,
        latencyMs: 100,
        stopReason: 'end_turn',
        text: `I will write wc.py; the key was ${secret}`,
      },
      { type: 'tool_call', pipeline: 1, task: 1, agent: 'eng', ts: at(3), tool: 'write_file', args: '{"path":"wc.py"}', outcome: 'ok', durationMs: 4, summary: 'wrote wc.py' },
      { type: 'task_failed', pipeline: 1, task: 1, agent: 'eng', ts: at(4), reason: 'the offline model cannot implement this requirement' },
      // A pipeline's reason may quote the model's fail_task, secret and all.
      { type: 'pipeline_status', pipeline: 1, task: 1, agent: 'eng', ts: at(5), status: 'failed', startedAt: at(0), reason: `Pipeline #1 failed at implementation #1: key was ${secret}` },
    ] as const;
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, ANTHROPIC_API_KEY: secret };
    expect(await runTelemetryJob({ env: { ...env, AUTOTEAM_OTEL_CAPTURE_CONTENT: 'true' }, team: 'c', events: [...events] })).toEqual({ on: true, errors: [] });
    receiver.assertNoErrors();
    const span = (name: string) => receiver.spans().find((s) => s.name === name)!;
    const messages = JSON.parse(String(span('chat claude-sonnet-5-5').attributes['gen_ai.output.messages']));
    expect(messages).toEqual([{ role: 'assistant', parts: [{ type: 'text', content: 'I will write wc.py; the key was [redacted]' }], finish_reason: 'stop' }]);
    expect(span('execute_tool write_file').attributes['gen_ai.tool.call.arguments']).toBe('{"path":"wc.py"}');
    expect(span('invoke_agent engineer').status).toEqual({ code: 2, message: 'the offline model cannot implement this requirement' });
    expect(span('pipeline 1').status).toEqual({ code: 2, message: 'Pipeline #1 failed at implementation #1: key was [redacted]' });
    expect(receiver.requests.some((request) => request.raw.includes(secret))).toBe(false);

    // The same events without asking: none of it leaves.
    const before = receiver.requests.length;
    await runTelemetryJob({ env, team: 'c', events: [...events] });
    const quiet = receiver.requests.slice(before);
    expect(quiet.length).toBeGreaterThan(0);
    for (const request of quiet) {
      for (const text of ['I will write', 'wc.py', 'offline model', 'key was', secret]) expect(request.raw.includes(text), text).toBe(false);
    }
    expect(receiver.spans().filter((s) => s.name === 'pipeline 1').at(-1)!.status).toEqual({ code: 2, message: 'pipeline failed' });
  });

  it('with probe, reports at once a collector address where nothing listens, and once only', async () => {
    // A port that was just free: nothing listens there.
    const closed = await OtlpReceiver.start();
    const deadUrl = closed.url;
    await closed.close();
    const errors: Error[] = [];
    const telemetry = await startTelemetry({ OTEL_EXPORTER_OTLP_ENDPOINT: deadUrl, OTEL_EXPORTER_OTLP_TIMEOUT: '1000' }, { onError: (error) => errors.push(error), probe: true });
    await expect.poll(() => errors.length).toBe(1);
    expect(errors[0]).toMatchObject({ code: 'TELEMETRY_EXPORT' });
    expect(errors[0]!.message).toMatch(new RegExp(`^traces could not be sent to ${deadUrl}: .*ECONNREFUSED`));
    // The failed flush at the end is the same streak: not said again.
    telemetry!.tap({ type: 'tool_call', team: 't', ts: at(1), tool: 'bash', args: '', outcome: 'ok', durationMs: 1, summary: '' } as TeamEvent);
    await telemetry!.shutdown();
    expect(errors).toHaveLength(1);
    // A collector that listens is not reported.
    const quiet: Error[] = [];
    const listening = await startTelemetry({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url }, { onError: (error) => quiet.push(error), probe: true });
    await listening!.shutdown();
    await new Promise((resolve) => setImmediate(resolve));
    expect(quiet).toEqual([]);
  });

  it('reports a collector that refuses spans once, naming only its origin, and the team goes on', async () => {
    const errors: Error[] = [];
    const telemetry = await startTelemetry(
      { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.url}/not-traces`, OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20hush' },
      { onError: (error) => errors.push(error) },
    );
    const call = (seconds: number) =>
      ({ type: 'tool_call', team: 't', ts: at(seconds), tool: 'bash', args: '', outcome: 'ok', durationMs: 1, summary: '' }) as TeamEvent;
    telemetry!.tap(call(1));
    telemetry!.tap(call(2));
    await telemetry!.shutdown();
    expect(receiver.errors).toEqual([expect.stringContaining('POST /not-traces')]);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ code: 'TELEMETRY_EXPORT' });
    expect(errors[0]!.message).toMatch(new RegExp(`^traces could not be sent to ${receiver.url}: `));
    expect(errors[0]!.message).not.toContain('hush');
    // Shut down, it takes no more events and a second shutdown is harmless.
    telemetry!.tap(call(3));
    await telemetry!.shutdown();
    expect(receiver.requests.length + receiver.errors.length).toBe(1);
  });

  it('reports a collector that takes the last spans and never answers, within the bound of the last export', async () => {
    // A collector that reads the request and says nothing: the exporter alone would wait its 10 s.
    const silent = http.createServer((request) => request.resume());
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
    try {
      const errors: Error[] = [];
      const telemetry = await startTelemetry({ OTEL_EXPORTER_OTLP_ENDPOINT: url }, { onError: (error) => errors.push(error) });
      telemetry!.tap({ type: 'tool_call', team: 't', ts: at(1), tool: 'bash', args: '', outcome: 'ok', durationMs: 1, summary: '' } as TeamEvent);
      await telemetry!.shutdown(300);
      expect(errors.map((error) => error.message)).toEqual([`traces could not be sent to ${url}: no answer within 300 ms at the end; the spans still queued were dropped`]);
    } finally {
      silent.closeAllConnections();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  it("exports a dead teammate's attempt from the process that releases its task, with the claim read from the board's log", async () => {
    // The dead teammate's own events reached the log before it died; its telemetry never exported.
    const log = new FileEventLog(root);
    await log.append([
      { type: 'task_posted', team: 'd', pipeline: 4, task: 40, ts: at(0), subject: 'Implement', stage: 'implementation', revision: 0, by: 'lead' },
      { type: 'task_claimed', team: 'd', pipeline: 4, task: 40, agent: 'eng', role: 'engineer', ts: at(1), token: 1, takeover: false },
      { type: 'task_released', team: 'd', pipeline: 4, task: 40, agent: 'eng', ts: at(5), kind: 'unfinished', detail: '' },
      { type: 'task_claimed', team: 'd', pipeline: 4, task: 40, agent: 'eng', role: 'engineer', ts: at(6), token: 2, takeover: false },
    ] as TeamEvent[]);
    const result = await runTelemetryJob({
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url },
      team: 'd',
      rootDir: root,
      withBoard: true,
      events: [
        { type: 'task_released', pipeline: 4, task: 40, agent: 'lead', ts: at(30), kind: 'owner_dead', detail: "eng's process is gone" },
        { type: 'pipeline_status', pipeline: 4, agent: 'lead', ts: at(31), status: 'cancelled', reason: 'stopped by the person' },
      ],
    });
    expect(result).toEqual({ on: true, errors: [] });
    receiver.assertNoErrors();
    const spans = receiver.spans();
    expect(spans.map((span) => span.name).sort()).toEqual(['invoke_agent engineer', 'pipeline 4']);
    const attempt = spans.find((span) => span.name === 'invoke_agent engineer')!;
    expect(attempt).toMatchObject({
      traceId: traceIdOf('d', 4, null),
      spanId: attemptSpanId('d', 40, 2),
      parentSpanId: pipelineSpanId('d', 4),
      startNs: BigInt(T0 + 6000) * 1_000_000n,
      status: { code: 2, message: "eng's process is gone" },
    });
    expect(attempt.attributes).toMatchObject({ 'gen_ai.agent.id': 'eng', 'autoteam.release.kind': 'owner_dead', 'error.type': 'owner_dead' });
    expect(spans.find((span) => span.name === 'pipeline 4')).toMatchObject({ startNs: BigInt(T0) * 1_000_000n, status: { code: 0 } });
  });
});

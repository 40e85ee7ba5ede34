/**
 * One pipeline, one trace: a lead, an analyst in a worker thread, an engineer in a child process
 * and a reviewer in another worker thread each export only their own spans to a loopback OTLP
 * receiver, yet every span lands in the pipeline's trace under the right parent — over
 * http/protobuf and http/json alike.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EventInput } from '../../src/core/events/schema.js';
import { attemptSpanId, pipelineSpanId, traceIdOf } from '../../src/core/telemetry/ids.js';
import { tempRoot } from '../helpers/board-spawn.js';
import { OtlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver.js';
import { runTelemetryJob, type TelemetryJob, type TelemetryJobResult } from '../helpers/telemetry-job.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '..', '..');
const emitter = path.join(repoRoot, 'tests', 'helpers', 'telemetry-emitter.ts');
const bootstrap = new URL('../helpers/ts-worker.mjs', import.meta.url);

function inWorker(job: TelemetryJob): Promise<TelemetryJobResult> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(bootstrap, { workerData: { entry: pathToFileURL(emitter).href, job } });
    worker.once('message', resolve);
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the worker exited (${code}) without a result`)));
  });
}

function inChild(job: TelemetryJob): Promise<TelemetryJobResult & { pid: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', emitter, JSON.stringify(job)], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += String(chunk)));
    child.stderr.on('data', (chunk) => (stderr += String(chunk)));
    child.on('close', (code) => (code === 0 ? resolve({ ...JSON.parse(stdout), pid: child.pid! }) : reject(new Error(`the emitter exited ${code}: ${stderr}`))));
  });
}

const TEAM = 'acme';
const T0 = Date.parse('2026-03-01T10:00:00.000Z');
const at = (seconds: number) => new Date(T0 + seconds * 1000).toISOString();
const ns = (seconds: number) => BigInt(T0 + seconds * 1000) * 1_000_000n;
const SECRET_PROSE = 'the analyst thinks aloud about folders';

const pipe = { pipeline: 7 } as const;
const analyst = { ...pipe, task: 21, agent: 'ana', role: 'analyst' } as const;
const engineer = { ...pipe, task: 22, agent: 'eng', role: 'engineer' } as const;
const reviewer = { ...pipe, task: 23, agent: 'rev', role: 'reviewer' } as const;

function modelCall(who: object, seconds: number, provider: string, model: string, latencyMs: number, stopReason = 'tool_use'): EventInput {
  const usage = { inputTokens: 1200, outputTokens: 300, cacheReadTokens: 1000, cacheWriteTokens: 200 };
  return { type: 'model_call', ...who, ts: at(seconds), provider, model, purpose: 'turn', ...usage, costUsd: 0.01, latencyMs, stopReason, text: SECRET_PROSE };
}

function toolCall(who: object, seconds: number, tool: string, args: string, outcome: 'ok' | 'execution_failed' = 'ok', durationMs = 20): EventInput {
  return { type: 'tool_call', ...who, ts: at(seconds), tool, args, outcome, durationMs, summary: `${tool} done` };
}

const lead: EventInput[] = [
  { type: 'task_posted', ...pipe, task: 21, agent: 'lead', ts: at(0), subject: 'Requirements: a word counter', stage: 'requirements', revision: 0, by: 'lead' },
  // The lead's own chat belongs to no pipeline: a trace of its own.
  { ...modelCall({ agent: 'lead', role: 'lead' }, 0.5, 'anthropic', 'claude-sonnet-5-5', 400, 'end_turn') },
];
const analystEvents: EventInput[] = [
  { type: 'task_claimed', ...analyst, ts: at(1), token: 1, takeover: false },
  modelCall(analyst, 3, 'anthropic', 'claude-sonnet-5-5', 1500),
  toolCall(analyst, 3.1, 'ask_question', '{"question":"which folder to organize?"}'),
  { type: 'question_asked', ...analyst, ts: at(3.1), questionId: 'q1', question: 'which folder to organize?' },
  { type: 'question_answered', ...analyst, ts: at(10), questionId: 'q1', answer: '~/Downloads', by: 'person' },
  { type: 'criterion_added', ...analyst, ts: at(11), id: 'c1', criterion: 'counts words' },
  toolCall(analyst, 11.5, 'complete_task', '{"result":"spec"}'),
  { type: 'task_completed', ...analyst, ts: at(12), result: 'the spec', signal: 'done' },
  { type: 'task_posted', ...pipe, task: 22, agent: 'ana', ts: at(12), subject: 'Implement', stage: 'implementation', revision: 0, by: 'ana' },
];
const engineerEvents: EventInput[] = [
  { type: 'task_claimed', ...engineer, ts: at(13), token: 1, takeover: false },
  modelCall(engineer, 15, 'openai', 'gpt-4.1-mini', 2000),
  toolCall(engineer, 15.5, 'write_file', '{"path":"wc.py"}'),
  toolCall(engineer, 17, 'run_tests', '{}', 'execution_failed', 1200),
  { type: 'task_released', ...engineer, ts: at(20), kind: 'error', detail: 'MODEL_TIMEOUT: no answer in 120 s', attempt: 1 },
  { type: 'task_claimed', ...engineer, ts: at(25), token: 2, takeover: false },
  modelCall(engineer, 27, 'openai', 'gpt-4.1-mini', 1000),
  toolCall(engineer, 28, 'submit_for_review', '{"files":["wc.py"]}'),
  { type: 'task_completed', ...engineer, ts: at(29), result: 'submitted' },
  { type: 'task_posted', ...pipe, task: 23, agent: 'eng', ts: at(29), subject: 'Review', stage: 'review', revision: 0, by: 'eng' },
];
const reviewerEvents: EventInput[] = [
  { type: 'task_claimed', ...reviewer, ts: at(30), token: 1, takeover: false },
  modelCall(reviewer, 32, 'anthropic', 'claude-sonnet-5-5', 1800),
  toolCall(reviewer, 33, 'run_check', '{"id":"c1"}'),
  { type: 'check_ran', ...reviewer, ts: at(33), id: 'c1', ok: true, exitCode: 0, language: 'python' },
  { type: 'review_verdict', ...reviewer, ts: at(34), verdict: 'approved', revision: 0, issues: [] },
  { type: 'task_completed', ...reviewer, ts: at(35), result: 'approved' },
  // Ends the pipeline in a thread that never saw its first task posted: the board's log says when.
  { type: 'pipeline_status', ...pipe, agent: 'rev', ts: at(35), status: 'approved' },
];

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

describe.each([
  { protocol: 'http/protobuf', contentType: 'application/x-protobuf' },
  { protocol: 'http/json', contentType: 'application/json' },
])('a pipeline worked by three teammates in other threads and processes, over $protocol', ({ protocol, contentType }) => {
  it('is one trace: pipeline → invoke_agent per attempt → chat and execute_tool, with GenAI attributes', async () => {
    const env = {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
      OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20abc,x-collector-team=acme',
    };
    const job = (events: EventInput[], withBoard = false): TelemetryJob => ({ env, team: TEAM, events, rootDir: root, withBoard });
    // In order, as the pipeline moves: each one ends (and exports) before the next begins.
    expect(await runTelemetryJob(job(lead))).toEqual({ on: true, errors: [] });
    expect(await inWorker(job(analystEvents))).toEqual({ on: true, errors: [] });
    const child = await inChild(job(engineerEvents));
    expect(child).toMatchObject({ on: true, errors: [] });
    expect(await inWorker(job(reviewerEvents, true))).toEqual({ on: true, errors: [] });
    receiver.assertNoErrors();

    for (const request of receiver.requests) {
      expect(request.contentType).toContain(contentType);
      expect(request.headers.authorization).toBe('Bearer abc');
      expect(request.headers['x-collector-team']).toBe('acme');
    }
    const spans = receiver.spans();
    const named = (name: string) => spans.filter((span) => span.name === name);
    const one = (name: string, match: (span: ReceivedSpan) => boolean = () => true) => {
      const found = named(name).filter(match);
      expect(found, name).toHaveLength(1);
      return found[0]!;
    };
    const traceId = traceIdOf(TEAM, 7, null)!;

    // The lead's chat is a trace of its own; every other span is in the pipeline's.
    const leadChat = one('chat claude-sonnet-5-5', (span) => span.attributes['autoteam.agent'] === 'lead');
    expect(leadChat.traceId).not.toBe(traceId);
    expect(leadChat.parentSpanId).toBe('');
    const inPipeline = spans.filter((span) => span !== leadChat);
    expect(new Set(inPipeline.map((span) => span.traceId))).toEqual(new Set([traceId]));
    expect(inPipeline).toHaveLength(1 + 4 + 4 + 6);

    const pipelineSpan = one('pipeline 7');
    expect(pipelineSpan).toMatchObject({ spanId: pipelineSpanId(TEAM, 7), parentSpanId: '', kind: 1, startNs: ns(0), endNs: ns(35), status: { code: 0 } });
    expect(pipelineSpan.attributes).toMatchObject({ 'gen_ai.operation.name': 'invoke_workflow', 'autoteam.pipeline.id': 7, 'autoteam.pipeline.status': 'approved' });

    const attempt = (role: string, token: number) => one(`invoke_agent ${role}`, (span) => span.attributes['autoteam.claim.token'] === token);
    const ana = attempt('analyst', 1);
    const eng1 = attempt('engineer', 1);
    const eng2 = attempt('engineer', 2);
    const rev = attempt('reviewer', 1);
    for (const span of [ana, eng1, eng2, rev]) {
      expect(span.parentSpanId).toBe(pipelineSpan.spanId);
      expect(span.kind).toBe(1);
      expect(span.attributes['gen_ai.operation.name']).toBe('invoke_agent');
    }
    expect(ana.attributes).toMatchObject({ 'gen_ai.agent.name': 'analyst', 'gen_ai.agent.id': 'ana', 'autoteam.task.id': 21, 'autoteam.task.outcome': 'completed', 'autoteam.task.signal': 'done' });
    expect(ana).toMatchObject({ spanId: attemptSpanId(TEAM, 21, 1), startNs: ns(1), endNs: ns(12), status: { code: 0 } });
    expect(ana.events.map((event) => event.name)).toEqual(['autoteam.question_asked', 'autoteam.question_answered', 'autoteam.criterion_added']);
    expect(eng1).toMatchObject({ startNs: ns(13), endNs: ns(20), status: { code: 2, message: 'MODEL_TIMEOUT: no answer in 120 s' } });
    expect(eng1.attributes).toMatchObject({ 'autoteam.task.outcome': 'released', 'autoteam.release.kind': 'error', 'error.type': 'error', 'gen_ai.provider.name': 'openai' });
    expect(eng2).toMatchObject({ startNs: ns(25), endNs: ns(29), status: { code: 0 } });
    expect(rev.events.map((event) => [event.name, event.timeNs])).toEqual([
      ['autoteam.check_ran', ns(33)],
      ['autoteam.review_verdict', ns(34)],
    ]);
    expect(rev.events[1]!.attributes).toMatchObject({ 'autoteam.review.verdict': 'approved', 'autoteam.review.issues': 0 });

    // Model calls: a client span from ts − latency to ts, under the attempt that made them.
    const anaChat = one('chat claude-sonnet-5-5', (span) => span.parentSpanId === ana.spanId);
    expect(anaChat).toMatchObject({ kind: 3, startNs: ns(1.5), endNs: ns(3) });
    expect(anaChat.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'anthropic',
      'gen_ai.request.model': 'claude-sonnet-5-5',
      // Anthropic counts cached input apart; the conventions count it in.
      'gen_ai.usage.input_tokens': 2400,
      'gen_ai.usage.output_tokens': 300,
      'gen_ai.usage.cache_read.input_tokens': 1000,
      'gen_ai.usage.cache_creation.input_tokens': 200,
      'gen_ai.response.finish_reasons': ['tool_use'],
    });
    const engChats = named('chat gpt-4.1-mini');
    expect(engChats.map((span) => span.parentSpanId).sort()).toEqual([eng1.spanId, eng2.spanId].sort());
    expect(engChats[0]!.attributes['gen_ai.usage.input_tokens']).toBe(1200);
    one('chat claude-sonnet-5-5', (span) => span.parentSpanId === rev.spanId);

    // Tool calls: internal spans under their attempt; a failure is an error with its kind.
    const parentOf = { ask_question: ana, complete_task: ana, write_file: eng1, run_tests: eng1, submit_for_review: eng2, run_check: rev };
    for (const [tool, parent] of Object.entries(parentOf)) {
      const span = one(`execute_tool ${tool}`);
      expect(span.parentSpanId, tool).toBe(parent.spanId);
      expect(span.attributes).toMatchObject({ 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': tool });
    }
    const failed = one('execute_tool run_tests');
    expect(failed).toMatchObject({ kind: 1, startNs: ns(15.8), endNs: ns(17), status: { code: 2, message: 'execution_failed' } });
    expect(failed.attributes['error.type']).toBe('execution_failed');

    // Each thread and process exported its own spans; the child is a process of its own.
    expect(new Set(spans.map((span) => span.resource['service.name']))).toEqual(new Set(['autoteam']));
    expect(one('execute_tool write_file').resource['process.pid']).toBe(child.pid);
    expect(ana.resource['process.pid']).toBe(process.pid);

    // Content stays home unless asked for.
    for (const span of spans) {
      expect(Object.keys(span.attributes).filter((name) => /messages|arguments|summary|result|text|answer/.test(name)), span.name).toEqual([]);
    }
    for (const request of receiver.requests) {
      expect(request.raw.includes(SECRET_PROSE)).toBe(false);
      expect(request.raw.includes('which folder')).toBe(false);
    }
  }, 120_000);
});

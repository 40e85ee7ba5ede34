/**
 * Traces from the real runtime: `autoteam run --auto` (the lead, with the analyst and the reviewer in
 * its worker threads) and an engineer in an `autoteam worker` process of its own, both exporting to a
 * loopback OTLP receiver through OTEL_EXPORTER_OTLP_ENDPOINT. Every span of the pipeline lands in one
 * trace: `pipeline 1` at the root, an `invoke_agent <role>` span per claim under it, and the
 * `chat offline-scripted` / `execute_tool <tool>` spans under the attempt that made them, the
 * engineer's from the worker process (its pid in the resource). GenAI attributes are there; what the
 * model and the person wrote is not. Once over http/protobuf, once over http/json.
 * Build first: `npm run build`.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TeamEvent, TeamEventSchema } from '../../src/core/events/schema.js';
import { attemptSpanId, pipelineSpanId, traceIdOf } from '../../src/core/telemetry/ids.js';
import { type ChildExit, CliChild } from '../helpers/cli-child.js';
import { OtlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver.js';
import { DOWNLOADS_REQUIREMENT, tempBoard } from '../helpers/pipeline-cli.js';

const python = spawnSync('python3', ['--version']).status === 0;

const roots: string[] = [];
afterAll(() => {
  for (const root of roots) fs.rmSync(root, { recursive: true, force: true });
});

type EventOf<T extends TeamEvent['type']> = Extract<TeamEvent, { type: T }>;

describe.runIf(python).each([
  { protocol: 'http/protobuf', contentType: 'application/x-protobuf' },
  { protocol: 'http/json', contentType: 'application/json' },
])('a run with the engineer in an `autoteam worker` process, traced over $protocol', ({ protocol, contentType }) => {
  let receiver: OtlpReceiver;
  let root = '';
  let team = '';
  let lead: CliChild;
  let worker: CliChild;
  let runExit: ChildExit;
  let workerExit: ChildExit;
  let spans: ReceivedSpan[] = [];
  let events: TeamEvent[] = [];
  const ofType = <T extends TeamEvent['type']>(type: T) => events.filter((event): event is EventOf<T> => event.type === type);
  const named = (prefix: string) => spans.filter((span) => span.name.startsWith(prefix));

  beforeAll(async () => {
    receiver = await OtlpReceiver.start();
    root = tempBoard('autoteam-otel-run-');
    roots.push(root);
    team = path.basename(root);
    // The lead's threads are the analyst and the reviewer; the engineer comes from another process.
    fs.writeFileSync(
      path.join(root, 'autoteam.config.json'),
      JSON.stringify({ team: [{ name: 'analyst', role: 'analyst' }, { name: 'reviewer', role: 'reviewer' }] }),
    );
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: protocol };
    worker = CliChild.start(['worker', '--name', 'engineer', '--role', 'engineer', '--dir', root], { cwd: root, env });
    try {
      await worker.waitForLine((line) => line.startsWith('[engineer] engineer on '), 'the worker to start');
      lead = CliChild.start(['run', '--auto', '--dir', root, DOWNLOADS_REQUIREMENT], { cwd: root, env });
      let ceiling: NodeJS.Timeout | undefined;
      runExit = await Promise.race([
        lead.exited.finally(() => clearTimeout(ceiling)),
        new Promise<never>((_, reject) => (ceiling = setTimeout(() => reject(new Error(`the run did not end\n${lead.describe()}`)), 240_000))),
      ]);
    } finally {
      // The worker outlives the run; SIGTERM stops it, and it exports its spans before it exits.
      lead?.child.kill('SIGKILL');
      workerExit = await worker.stop('SIGTERM');
      await receiver.close();
    }
    spans = receiver.spans();
    events = fs
      .readFileSync(path.join(root, '.team', 'events.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => TeamEventSchema.parse(JSON.parse(line)));
  }, 330_000);

  it('the run is approved with the engineer’s tasks done by the worker process, and both exit cleanly', () => {
    expect(runExit, lead.describe()).toEqual({ code: 0, signal: null });
    expect(workerExit, worker.describe()).toEqual({ code: 0, signal: null });
    expect(lead.lines.join('\n')).toMatch(/pipeline #1: APPROVED/);
    const claims = ofType('task_claimed');
    expect(new Set(claims.filter((claim) => claim.role === 'engineer').map((claim) => claim.agent))).toEqual(new Set(['engineer']));
    expect(new Set(claims.map((claim) => claim.role))).toEqual(new Set(['analyst', 'engineer', 'reviewer']));
    // The worker process itself says it worked each of them.
    for (const claim of claims.filter((c) => c.role === 'engineer')) expect(worker.lines, worker.describe()).toContain(`[engineer] working #${claim.task}`);
  });

  it('every export was accepted, in the configured encoding', () => {
    receiver.assertNoErrors();
    expect(receiver.requests.length).toBeGreaterThan(0);
    for (const request of receiver.requests) expect(request.contentType).toContain(contentType);
  });

  it('puts every span of the pipeline in one trace, under one `pipeline 1` root', () => {
    const traceId = traceIdOf(team, 1, null)!;
    expect(spans.length).toBeGreaterThan(0);
    expect(new Set(spans.map((span) => span.traceId))).toEqual(new Set([traceId]));
    const roots = spans.filter((span) => span.parentSpanId === '');
    expect(roots.map((span) => span.name)).toEqual(['pipeline 1']);
    expect(roots[0]).toMatchObject({ spanId: pipelineSpanId(team, 1), kind: 1 });
    expect(roots[0]!.attributes).toMatchObject({ 'gen_ai.operation.name': 'invoke_workflow', 'autoteam.pipeline.id': 1, 'autoteam.pipeline.status': 'approved' });
    // The pipeline span covers the whole story.
    for (const span of spans) {
      expect(span.startNs).toBeGreaterThanOrEqual(roots[0]!.startNs);
      expect(span.endNs).toBeLessThanOrEqual(roots[0]!.endNs);
    }
  });

  it('has an `invoke_agent <role>` span per claim, under the pipeline span, with the claim’s id', () => {
    const pipelineSpan = named('pipeline ')[0]!;
    const attempts = named('invoke_agent ');
    const claims = ofType('task_claimed');
    expect(attempts.map((span) => span.spanId).sort()).toEqual(claims.map((claim) => attemptSpanId(team, claim.task!, claim.token)).sort());
    for (const claim of claims) {
      const span = attempts.find((s) => s.spanId === attemptSpanId(team, claim.task!, claim.token))!;
      expect(span.name).toBe(`invoke_agent ${claim.role}`);
      expect(span.parentSpanId).toBe(pipelineSpan.spanId);
      expect(span.attributes).toMatchObject({
        'gen_ai.operation.name': 'invoke_agent',
        'gen_ai.agent.name': claim.role,
        'gen_ai.agent.id': claim.agent,
        'autoteam.task.id': claim.task,
        'autoteam.claim.token': claim.token,
        'autoteam.task.outcome': 'completed',
      });
    }
    expect(new Set(attempts.map((span) => span.name))).toEqual(new Set(['invoke_agent analyst', 'invoke_agent engineer', 'invoke_agent reviewer']));
  });

  it('puts each `chat` and `execute_tool` span under the attempt of its task, one per model and tool call', () => {
    const attempts = named('invoke_agent ');
    const attemptOf = (span: ReceivedSpan) => attempts.find((attempt) => attempt.spanId === span.parentSpanId);
    const chats = named('chat ');
    const tools = named('execute_tool ');
    expect(chats).toHaveLength(ofType('model_call').length);
    expect(tools).toHaveLength(ofType('tool_call').length);
    expect(new Set(chats.map((span) => span.name))).toEqual(new Set(['chat offline-scripted']));
    for (const span of [...chats, ...tools]) {
      const attempt = attemptOf(span);
      expect(attempt, `${span.name} under ${span.parentSpanId}`).toBeDefined();
      expect(span.attributes['autoteam.task.id']).toBe(attempt!.attributes['autoteam.task.id']);
      expect(span.attributes['autoteam.agent']).toBe(attempt!.attributes['gen_ai.agent.id']);
    }
    expect(tools.map((span) => span.name.slice('execute_tool '.length)).sort()).toEqual(ofType('tool_call').map((call) => call.tool).sort());
    for (const span of tools) expect(span.attributes).toMatchObject({ 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': span.name.slice('execute_tool '.length) });
    // Every role's attempts made model calls and tool calls.
    for (const role of ['analyst', 'engineer', 'reviewer']) {
      const own = new Set(attempts.filter((attempt) => attempt.name === `invoke_agent ${role}`).map((attempt) => attempt.spanId));
      expect(chats.some((span) => own.has(span.parentSpanId)), role).toBe(true);
      expect(tools.some((span) => own.has(span.parentSpanId)), role).toBe(true);
    }
  });

  it('carries the GenAI attributes of each model call', () => {
    const chats = named('chat ');
    const calls = ofType('model_call');
    for (const span of chats) {
      expect(span.kind).toBe(3);
      expect(span.attributes).toMatchObject({ 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': 'offline', 'gen_ai.request.model': 'offline-scripted', 'autoteam.pipeline.id': 1 });
      expect(span.attributes['gen_ai.usage.input_tokens']).toBeGreaterThan(0);
      expect(span.attributes['gen_ai.usage.output_tokens']).toBeGreaterThan(0);
    }
    const total = (values: number[]) => values.reduce((sum, value) => sum + value, 0);
    expect(total(chats.map((span) => span.attributes['gen_ai.usage.input_tokens'] as number))).toBe(total(calls.map((call) => call.inputTokens)));
  });

  it('exports the engineer’s spans from the worker process and the others from the lead’s process', () => {
    const attempts = named('invoke_agent ');
    const pidOf = (span: ReceivedSpan) => span.resource['process.pid'];
    const engineer = new Set(attempts.filter((span) => span.name === 'invoke_agent engineer').map((span) => span.spanId));
    const fromWorker = spans.filter((span) => engineer.has(span.spanId) || engineer.has(span.parentSpanId));
    const fromLead = spans.filter((span) => !fromWorker.includes(span));
    expect(fromWorker.length).toBeGreaterThan(0);
    expect(new Set(fromWorker.map(pidOf))).toEqual(new Set([worker.pid]));
    expect(new Set(fromLead.map(pidOf))).toEqual(new Set([lead.pid]));
    for (const span of spans) expect(span.resource['service.name']).toBe('autoteam');
  });

  it('exports no prompt, model text, tool argument, question or answer by default', () => {
    const raw = Buffer.concat(receiver.requests.map((request) => request.raw));
    const written = [
      ...ofType('model_call').map((call) => call.text),
      ...ofType('question_asked').map((event) => event.question),
      ...ofType('question_answered').map((event) => event.answer),
      ...ofType('criterion_added').map((event) => event.criterion),
      ...ofType('tool_call').map((call) => call.args).filter((args) => args.length > 20),
      DOWNLOADS_REQUIREMENT,
    ].filter((text) => text.length > 0);
    expect(written.length).toBeGreaterThan(10);
    for (const text of written) expect(raw.includes(Buffer.from(text)), text.slice(0, 80)).toBe(false);
    for (const span of spans) {
      for (const key of ['gen_ai.output.messages', 'gen_ai.input.messages', 'gen_ai.tool.call.arguments', 'autoteam.tool.summary', 'autoteam.task.result']) {
        expect(span.attributes, `${span.name} ${key}`).not.toHaveProperty(key);
      }
    }
  });
});

/**
 * The provider registry as a value, the offline model's context beside the request (never in it), and
 * price tables passed to whoever prices (no process-wide table).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { compactConversation } from '../../src/core/agent/compaction.js';
import { runLoop } from '../../src/core/agent/loop.js';
import { TeamModels } from '../../src/core/lead/team-models.js';
import { Spend } from '../../src/core/lead/spend.js';
import type { EventInput } from '../../src/core/events/schema.js';
import { loadModelSpec } from '../../src/core/model/config.js';
import { costOfCall, costWith, createModel, describeModel, modelId, pricer } from '../../src/core/model/factory.js';
import { PRICES, priceTable } from '../../src/core/model/pricing.js';
import { anthropicProvider } from '../../src/core/model/providers/anthropic/index.js';
import { offlineProvider } from '../../src/core/model/providers/offline/index.js';
import { BUILTIN_PROVIDERS } from '../../src/core/model/providers/registry.js';
import { RecordingModel } from '../../src/core/model/recording.js';
import { providerRegistry } from '../../src/core/model/registry.js';
import type { ModelClient, ModelRequest, ModelResponse, OfflineContext } from '../../src/core/model/types.js';
import type { HandoffData } from '../../src/core/stages/handoff.js';
import { loopContext } from '../helpers/agent-team.js';
import { removeBoard, tempBoard } from '../helpers/agent-wait.js';

const KEY = 'sk-ant-registry-test-0123456789';
const usage = (inputTokens: number, outputTokens: number) => ({ inputTokens, outputTokens, cacheReadTokens: 0, cacheWriteTokens: 0 });

/** A model that keeps both arguments of every call and answers with text. */
class TwoArgModel implements ModelClient {
  readonly id: string;
  readonly label = 'two-arg';
  readonly calls: Array<{ request: ModelRequest; offline: OfflineContext | undefined }> = [];
  constructor(
    id = 'two-arg',
    readonly provider = 'test',
  ) {
    this.id = id;
  }
  async create(request: ModelRequest, offline?: OfflineContext): Promise<ModelResponse> {
    this.calls.push({ request, offline });
    return { content: [{ type: 'text', text: 'done' }], stopReason: 'end_turn', usage: usage(1_000_000, 0) };
  }
}

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) removeBoard(root);
});
function root(): string {
  const dir = tempBoard();
  roots.push(dir);
  return dir;
}

describe('the registry', () => {
  it('lists the built-in providers in precedence order, and refuses a second id or a wrapper kind', () => {
    expect(BUILTIN_PROVIDERS.ids).toEqual(['anthropic', 'openai', 'offline']);
    expect(() => providerRegistry([anthropicProvider, anthropicProvider])).toThrow("provider 'anthropic' is registered twice");
    expect(() => providerRegistry([{ ...offlineProvider, id: 'record' }])).toThrow("provider id 'record' is taken");
    // A registry is a value: one without anthropic does not choose it, whatever the environment says.
    const local = providerRegistry([offlineProvider]);
    expect(loadModelSpec({ ANTHROPIC_API_KEY: KEY }, {}, local)).toEqual({ kind: 'offline', reason: 'no provider setting is set' });
    expect(loadModelSpec({ ANTHROPIC_API_KEY: KEY })).toMatchObject({ kind: 'anthropic' });
  });

  it("checks a spec's settings against its provider's schema, naming the field and never the key", async () => {
    const both = createModel({ kind: 'anthropic', model: 'm', apiKey: KEY, authToken: `${KEY}-token` });
    await expect(both).rejects.toThrow('anthropic settings: apiKey: give an API key or an auth token (exactly one)');
    await expect(both).rejects.toThrow(expect.objectContaining({ message: expect.not.stringContaining(KEY) }));
    await expect(createModel({ kind: 'openai', model: 'm', baseURL: 'ftp://x/v1' })).rejects.toThrow("openai settings: baseURL: OPENAI_BASE_URL must be http(s), got 'ftp:'");
    await expect(createModel({ kind: 'offline', reason: 'x', extra: true } as never)).rejects.toThrow(/offline settings: .*extra/);
    expect(() => describeModel({ kind: 'gemini', model: 'g' })).toThrow("unknown model provider 'gemini' (providers: anthropic, openai, offline)");
    const spec = { kind: 'anthropic', model: 'claude-x', apiKey: KEY, baseURL: 'http://127.0.0.1:9' } as const;
    expect(describeModel(spec)).toBe('claude-x via 127.0.0.1:9');
    expect(describeModel({ kind: 'record', dir: '/tmp/rec', inner: spec })).toBe('claude-x via 127.0.0.1:9 (recording to /tmp/rec)');
    expect(modelId({ kind: 'record', dir: '/tmp/rec', inner: spec })).toBe('claude-x');
    // The offline model says how to get a real one only when nothing chose it.
    expect(describeModel(loadModelSpec({}))).toBe('offline scripted model — set ANTHROPIC_API_KEY or OPENAI_API_KEY for a real model');
    expect(describeModel(loadModelSpec({ ANTHROPIC_API_KEY: KEY }, { provider: 'offline' }))).toBe('offline scripted model');
    expect(describeModel(loadModelSpec({ ANTHROPIC_API_KEY: KEY }, { provider: 'offline', providerLabel: 'provider' }))).toBe('offline scripted model');
  });
});

describe("the offline model's context", () => {
  it('travels beside the request from the loop and from compaction; the request carries only what a provider sends', async () => {
    const model = new TwoArgModel();
    const handoff = { stage: 'review' } as unknown as HandoffData;
    await runLoop({
      model,
      system: 'sys',
      tools: [],
      messages: [{ role: 'user', content: 'go' }],
      ctx: loopContext(root()),
      agent: { name: 'eng', role: 'engineer', stage: 'review' },
      maxTurns: 1,
      handoff,
      beforeTurn: async () => ({ inject: 'please stop', shutdownRequest: 'req-1' }),
    });
    await compactConversation({
      model,
      messages: [{ role: 'user', content: 'id' }, { role: 'assistant', content: 'ok' }, { role: 'user', content: 'task' }],
      identity: [],
      taskPrompt: 'task',
      agent: { name: 'eng', role: 'engineer', stage: null },
    });
    const [turn, summary] = model.calls;
    expect(Object.keys(turn!.request).sort()).toEqual(['agent', 'maxTokens', 'messages', 'signal', 'system', 'tools']);
    expect(turn!.offline).toEqual({ handoff, shutdownRequest: 'req-1' });
    expect(Object.keys(summary!.request).sort()).toEqual(['agent', 'maxTokens', 'messages', 'signal', 'system', 'tools']);
    expect(summary!.offline).toEqual({ calls: [] });
  });

  it('is recorded under request.context (not the handoff), as recordings always held it', async () => {
    const dir = path.join(root(), 'rec');
    const inner = new TwoArgModel();
    const recording = new RecordingModel(inner, dir);
    const task = { id: 3, subject: 'S', description: 'D', stage: null, requirePlan: false };
    await recording.create({ system: 's', messages: [], tools: [], agent: { name: 'e', role: 'engineer', stage: null, task: 3 } }, { task, handoff: { stage: 'x' } as unknown as HandoffData });
    expect(inner.calls[0]!.offline).toMatchObject({ task });
    const [file] = fs.readdirSync(dir);
    const recorded = JSON.parse(fs.readFileSync(path.join(dir, file!), 'utf8'));
    expect(recorded.request.context).toEqual({ task });
    expect(recorded.request).not.toHaveProperty('handoff');
  });
});

describe('price tables are values', () => {
  const LOCAL = priceTable({ 'qwen2.5': { input: 0.2, output: 0.4, cacheRead: 0 } });

  it('price a call, a spec and a team at the table given, and nothing leaks into the built-in one', () => {
    const local = loadModelSpec({ OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', MODEL_ID: 'qwen2.5-coder' });
    expect(costWith(local, usage(1_000_000, 0), LOCAL)).toBeCloseTo(0.2, 6);
    expect(costWith(local, usage(1_000_000, 0))).toBeNull();
    expect(PRICES).not.toHaveProperty('qwen2.5');
    expect(costOfCall({ id: 'qwen2.5-coder', provider: 'openai' }, usage(0, 1_000_000), LOCAL)).toBeCloseTo(0.4, 6);
    expect(costOfCall({ id: 'qwen2.5-coder', provider: 'openai' }, usage(0, 1_000_000))).toBeNull();
    // OpenAI counts cached tokens inside the input: 1M input of which 0.5M cached.
    expect(pricer(local, LOCAL)('qwen2.5-coder', { inputTokens: 1_000_000, outputTokens: 0, cacheReadTokens: 500_000 })).toBeCloseTo(0.1, 6);
    const spend = new Spend(pricer(local, LOCAL));
    spend.add('eng', 'qwen2.5-coder', usage(1_000_000, 0));
    expect(spend.of('eng').cost).toBeCloseTo(0.2, 6);
    const team = new TeamModels(local, {}, LOCAL);
    const task = { role: 'engineer', usage: { calls: 1, inputTokens: 1_000_000, outputTokens: 0, cacheReadTokens: 0 } };
    expect(team.costOf([task as never])).toBeCloseTo(0.2, 6);
    expect(new TeamModels(local).costOf([task as never])).toBeNull();
  });

  it("price the loop's model_call event at the table given", async () => {
    const events: EventInput[] = [];
    const run = (prices?: typeof LOCAL) =>
      runLoop({
        model: new TwoArgModel('qwen2.5-coder', 'openai'),
        system: 's',
        tools: [],
        messages: [{ role: 'user', content: 'go' }],
        ctx: loopContext(root()),
        agent: { name: 'eng', role: 'engineer', stage: null },
        maxTurns: 1,
        events: { emit: (event) => events.push(event) },
        ...(prices ? { prices } : {}),
      });
    await run(LOCAL);
    await run();
    const costs = events.flatMap((event) => (event.type === 'model_call' ? [event.costUsd] : []));
    expect(costs[0]).toBeCloseTo(0.2, 6);
    expect(costs[1]).toBeNull();
  });
});

import { describe, expect, it } from 'vitest';
import { formatSpend, Spend } from '../../src/core/lead/spend.js';
import { costOf, formatCost, priceOf } from '../../src/core/model/pricing.js';

const usage = (inputTokens: number, outputTokens: number, cacheReadTokens = 0) => ({ inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens: 0 });

describe('prices', () => {
  it('match a model by its longest listed prefix, and know nothing of local models', () => {
    expect(priceOf('claude-sonnet-4-5-20250929')).toEqual({ input: 3, output: 15, cacheRead: 0.3 });
    expect(priceOf('gpt-4.1-mini-2025-04-14')).toEqual({ input: 0.4, output: 1.6, cacheRead: 0.1 });
    expect(priceOf('gpt-4.1')).toEqual({ input: 2, output: 8, cacheRead: 0.5 });
    expect(priceOf('llama3.1:8b')).toBeNull();
  });

  it('cost input, cached input and output at their own rates; OpenAI counts cached tokens inside the input', () => {
    // Anthropic: 1M fresh in ($3) + 1M cached ($0.30) + 0.1M out ($1.50)
    expect(costOf(usage(1_000_000, 100_000, 1_000_000), 'claude-sonnet-4')).toBeCloseTo(4.8, 6);
    // OpenAI: 1M input of which 0.5M cached: 0.5M × $0.40 + 0.5M × $0.10 + 1M out × $1.60
    expect(costOf(usage(1_000_000, 1_000_000, 500_000), 'gpt-4.1-mini', true)).toBeCloseTo(0.2 + 0.05 + 1.6, 6);
    expect(costOf(usage(10, 10), 'my-local-model')).toBeNull();
    expect(formatCost(4.8)).toBe('$4.80');
    expect(formatCost(0.0412)).toBe('$0.041');
    expect(formatCost(0.00031)).toBe('$0.0003');
  });

  it("a session adds each teammate's calls; an unpriced model shows tokens only", () => {
    const spend = new Spend(false);
    spend.add('analyst', 'claude-sonnet-4', usage(10_000, 1_000));
    spend.add('analyst', 'claude-sonnet-4', usage(20_000, 2_000, 5_000));
    spend.add('engineer', 'claude-sonnet-4', usage(1_000, 100));
    expect(spend.of('analyst')).toMatchObject({ calls: 2, inputTokens: 30_000, outputTokens: 3_000, cacheReadTokens: 5_000 });
    expect(formatSpend(spend.of('analyst'))).toBe('38k tok · $0.137');
    expect(spend.total()).toMatchObject({ calls: 3, inputTokens: 31_000 });
    expect(formatSpend(spend.of('nobody'))).toBe('0 tok');
    const local = new Spend(true);
    local.add('eng', 'qwen2.5-coder', usage(900, 50));
    expect(local.of('eng').cost).toBeNull();
    expect(formatSpend(local.of('eng'))).toBe('950 tok');
    expect(formatSpend(spend.of('analyst'), true)).toBe('38k tok');
  });
});

describe('what a pipeline cost, by its roles\' models', () => {
  it('prices each task at its role\'s model; an unpriced or offline model makes it tokens only', async () => {
    const { LeadSession } = await import('../../src/core/lead/session.js');
    const fs = await import('node:fs');
    const os = await import('node:os');
    const path = await import('node:path');
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-cost-'));
    const task = (role: string, inputTokens: number, outputTokens: number) => ({ role, usage: { calls: 1, inputTokens, outputTokens } }) as never;
    try {
      const priced = new LeadSession({
        rootDir: root,
        model: { kind: 'anthropic', apiKey: 'sk-test-key-0000', model: 'claude-sonnet-4' },
        models: { analyst: { kind: 'anthropic', apiKey: 'sk-test-key-0000', model: 'claude-haiku-4-5' } },
      });
      // analyst: 1M in × $1 + 0.1M out × $5 = $1.50; engineer: 1M in × $3 + 0.1M out × $15 = $4.50
      expect(priced.costOf([task('analyst', 1_000_000, 100_000), task('engineer', 1_000_000, 100_000)])).toBeCloseTo(6, 6);
      // Nothing spent yet is no price at all, not $0.0000.
      expect(priced.costOf([{ role: 'engineer', usage: { calls: 0, inputTokens: 0, outputTokens: 0 } } as never])).toBeNull();
      const local = new LeadSession({ rootDir: root, model: { kind: 'openai', model: 'qwen2.5-coder', baseURL: 'http://127.0.0.1:9/v1' } });
      expect(local.costOf([task('engineer', 10, 10)])).toBeNull();
      const offline = new LeadSession({ rootDir: root, model: { kind: 'offline', reason: 'test' } });
      expect(offline.costOf([task('engineer', 10, 10)])).toBeNull();
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});

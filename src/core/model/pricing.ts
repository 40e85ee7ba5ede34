import type { Usage } from './types.js';

/** Dollars per million tokens: input, output, and input read from the prompt cache. */
export interface Price {
  input: number;
  output: number;
  cacheRead: number;
}

/**
 * List prices of the models people commonly run autoteam on, matched by id prefix (longest first), so
 * `claude-sonnet-4-5-20250929` finds `claude-sonnet-4`. A model not listed shows tokens only.
 */
export const PRICES: Readonly<Record<string, Price>> = {
  'claude-opus-4-5': { input: 5, output: 25, cacheRead: 0.5 },
  'claude-opus-4': { input: 15, output: 75, cacheRead: 1.5 },
  'claude-sonnet': { input: 3, output: 15, cacheRead: 0.3 },
  'claude-haiku-4': { input: 1, output: 5, cacheRead: 0.1 },
  'claude-3-5-haiku': { input: 0.8, output: 4, cacheRead: 0.08 },
  'gpt-4.1-mini': { input: 0.4, output: 1.6, cacheRead: 0.1 },
  'gpt-4.1-nano': { input: 0.1, output: 0.4, cacheRead: 0.025 },
  'gpt-4.1': { input: 2, output: 8, cacheRead: 0.5 },
  'gpt-4o-mini': { input: 0.15, output: 0.6, cacheRead: 0.075 },
  'gpt-4o': { input: 2.5, output: 10, cacheRead: 1.25 },
  'o4-mini': { input: 1.1, output: 4.4, cacheRead: 0.275 },
};

/** A price table: model id prefixes and their prices (the built-in `PRICES`, or `priceTable(configured)`). */
export type PriceTable = Readonly<Record<string, Price>>;

/** The built-in prices with autoteam.config.json's `prices` over them: a value, handed to whoever prices. */
export function priceTable(configured: PriceTable = {}): PriceTable {
  return { ...PRICES, ...configured };
}

export function priceOf(model: string, table: PriceTable = PRICES): Price | null {
  const id = model.toLowerCase();
  const key = Object.keys(table)
    .filter((prefix) => id.startsWith(prefix))
    .sort((a, b) => b.length - a.length)[0];
  return key ? table[key]! : null;
}

/**
 * Dollars for `usage` on `model`, or null when its price is unknown. Cached input is billed at the
 * cache price; providers count it inside the input tokens (OpenAI) or apart (Anthropic: `inputTokens`
 * excludes it), so `cachedInInput` says which.
 */
export function costOf(
  usage: Pick<Usage, 'inputTokens' | 'outputTokens'> & Partial<Pick<Usage, 'cacheReadTokens'>>,
  model: string,
  cachedInInput = false,
  table: PriceTable = PRICES,
): number | null {
  const price = priceOf(model, table);
  if (!price) return null;
  const cached = usage.cacheReadTokens ?? 0;
  const fresh = cachedInInput ? Math.max(0, usage.inputTokens - cached) : usage.inputTokens;
  return (fresh * price.input + cached * price.cacheRead + usage.outputTokens * price.output) / 1_000_000;
}

export function formatCost(usd: number): string {
  return usd >= 1 ? `$${usd.toFixed(2)}` : usd >= 0.01 ? `$${usd.toFixed(3)}` : `$${usd.toFixed(4)}`;
}

/** `850 tok`, `12.3k tok`, `1.2M tok`. */
export function formatTokens(tokens: number): string {
  if (tokens < 1_000) return `${tokens} tok`;
  if (tokens < 1_000_000) return `${(tokens / 1_000).toFixed(tokens < 10_000 ? 1 : 0)}k tok`;
  return `${(tokens / 1_000_000).toFixed(1)}M tok`;
}

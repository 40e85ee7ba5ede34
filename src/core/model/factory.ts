import { pathToFileURL } from 'node:url';
import { ConfigError } from '../errors.js';
import { PRICES, type PriceTable, costOf } from './pricing.js';
import type { AnyProvider, PricedUsage } from './provider.js';
import { BUILTIN_PROVIDERS } from './providers/registry.js';
import type { ProviderRegistry } from './registry.js';
import { type AnySpec, isWrapper, type ModelSpec, type ProviderSpec, providerSpec } from './spec.js';
import type { ModelClient } from './types.js';
import { describeZodError } from '../board/schemas.js';

export { type AnySpec, type ModelSpec, type ProviderSpec, providerSpec } from './spec.js';

/** A provider spec's provider and its settings, checked against the provider's schema (errors name the field). */
export function settingsOf(spec: ProviderSpec, registry: ProviderRegistry = BUILTIN_PROVIDERS): { provider: AnyProvider; settings: object } {
  const provider = registry.get(spec.kind);
  if (!provider) throw new ConfigError(`unknown model provider '${spec.kind}' (providers: ${registry.ids.join(', ')})`);
  const { kind: _kind, ...rest } = spec;
  const parsed = provider.settingsSchema.safeParse(rest);
  if (!parsed.success) {
    // Paths and messages only: a setting's value may be a key.
    throw new ConfigError(`${spec.kind} settings: ${describeZodError(parsed.error, undefined, { root: '(settings)' })}`);
  }
  return { provider, settings: parsed.data as object };
}

export async function createModel(spec: AnySpec, registry: ProviderRegistry = BUILTIN_PROVIDERS): Promise<ModelClient> {
  if (!isWrapper(spec)) {
    const { provider, settings } = settingsOf(spec, registry);
    return provider.create(settings);
  }
  switch (spec.kind) {
    case 'record': {
      const { RecordingModel } = await import('./recording.js');
      return new RecordingModel(await createModel(spec.inner, registry), spec.dir);
    }
    case 'replay': {
      const { ReplayModel } = await import('./recording.js');
      return new ReplayModel(spec.dir);
    }
    case 'module': {
      const loaded = (await import(pathToFileURL(spec.path).href)) as Record<string, unknown>;
      const factory = loaded[spec.exportName ?? 'createModel'];
      if (typeof factory !== 'function') throw new ConfigError(`${spec.path} has no export '${spec.exportName ?? 'createModel'}'`);
      return (await (factory as (options: unknown) => ModelClient | Promise<ModelClient>)(spec.options)) as ModelClient;
    }
  }
}

/** What the UI says it runs on (`hint`: the offline model says how to get a real one). */
export function describeModel(spec: AnySpec, hint = true, registry: ProviderRegistry = BUILTIN_PROVIDERS): string {
  if (!isWrapper(spec)) {
    const { provider, settings } = settingsOf(spec, registry);
    return provider.describe(settings, hint);
  }
  if (spec.kind === 'record') return `${describeModel(spec.inner, hint, registry)} (recording to ${spec.dir})`;
  if (spec.kind === 'replay') return `replay of ${spec.dir}`;
  return `model from ${spec.path}`;
}

/** The model's id, for machines (a JSON summary): `offline-scripted`, the provider's model id, `replay`. */
export function modelId(spec: AnySpec, registry: ProviderRegistry = BUILTIN_PROVIDERS): string {
  if (!isWrapper(spec)) {
    const { provider, settings } = settingsOf(spec, registry);
    return provider.modelId(settings);
  }
  if (spec.kind === 'record') return modelId(spec.inner, registry);
  if (spec.kind === 'replay') return 'replay';
  return 'module';
}

/** Dollars `usage` cost on the provider `spec` runs, at `prices` (null: no price, a local or the offline model, a replay). */
export function costWith(spec: AnySpec, usage: PricedUsage, prices: PriceTable = PRICES, registry: ProviderRegistry = BUILTIN_PROVIDERS): number | null {
  const inner = providerSpec(spec);
  if (isWrapper(inner)) return null;
  const { provider, settings } = settingsOf(inner, registry);
  return provider.cost(provider.modelId(settings), usage, prices);
}

/**
 * Prices any model id as the provider of `spec` counts tokens (the lead's spend per teammate, whose
 * usage arrives with its model's id). A wrapper without a provider counts cached input apart.
 */
export function pricer(spec: AnySpec, prices: PriceTable = PRICES, registry: ProviderRegistry = BUILTIN_PROVIDERS): (model: string, usage: PricedUsage) => number | null {
  const inner = providerSpec(spec);
  const provider = isWrapper(inner) ? undefined : registry.get(inner.kind);
  return (model, usage) => (provider ? provider.cost(model, usage, prices) : costOf(usage, model, false, prices));
}

/** Dollars one call of `client` cost (its provider's way of counting; a client of no provider counts cached input apart). */
export function costOfCall(client: Pick<ModelClient, 'id' | 'provider'>, usage: PricedUsage, prices: PriceTable = PRICES, registry: ProviderRegistry = BUILTIN_PROVIDERS): number | null {
  const provider = client.provider ? registry.get(client.provider) : undefined;
  return provider ? provider.cost(client.id, usage, prices) : costOf(usage, client.id, false, prices);
}

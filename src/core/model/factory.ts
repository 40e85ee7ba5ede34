import { pathToFileURL } from 'node:url';
import { ConfigError } from '../errors.js';
import type { ModelConfig } from './providers/anthropic.js';
import { costOf } from './pricing.js';
import { ScriptedModel } from './scripted/scripted-model.js';
import type { ModelClient } from './types.js';

/**
 * How a thread builds its model. Plain data, so it crosses `postMessage`. `module` loads a
 * ModelClient factory from a file: the way tests put a fake model behind the interface in a worker.
 */
export type ModelSpec =
  | ModelConfig
  | { kind: 'module'; path: string; exportName?: string; options?: unknown }
  /** Every call of `inner` written to `dir` (--record). */
  | { kind: 'record'; dir: string; inner: ModelSpec }
  /** The calls recorded in `dir` served instead of a provider (--replay). */
  | { kind: 'replay'; dir: string };

export async function createModel(spec: ModelSpec): Promise<ModelClient> {
  switch (spec.kind) {
    case 'offline':
      return new ScriptedModel();
    case 'anthropic': {
      // The SDK is loaded only by threads that use it.
      const { AnthropicModel } = await import('./providers/anthropic.js');
      return new AnthropicModel(spec);
    }
    case 'openai': {
      const { OpenAIModel } = await import('./providers/openai.js');
      return new OpenAIModel(spec);
    }
    case 'record': {
      const { RecordingModel } = await import('./recording.js');
      return new RecordingModel(await createModel(spec.inner), spec.dir);
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

/** The provider under a recording (the spec itself otherwise). */
export function providerSpec(spec: ModelSpec): ModelSpec {
  return spec.kind === 'record' ? providerSpec(spec.inner) : spec;
}

/** What the UI says it runs on (`hint`: the offline model says how to get a real one). */
export function describeModel(spec: ModelSpec, hint = true): string {
  if (spec.kind === 'offline') return hint ? 'offline scripted model — set ANTHROPIC_API_KEY or OPENAI_API_KEY for a real model' : 'offline scripted model';
  if (spec.kind === 'anthropic') return spec.baseURL ? `${spec.model} via ${new URL(spec.baseURL).host}` : spec.model;
  if (spec.kind === 'openai') return `${spec.model} via ${spec.baseURL ? new URL(spec.baseURL).host : 'OpenAI'}`;
  if (spec.kind === 'record') return `${describeModel(spec.inner, hint)} (recording to ${spec.dir})`;
  if (spec.kind === 'replay') return `replay of ${spec.dir}`;
  return `model from ${spec.path}`;
}

/** The model's id, for machines (a JSON summary): `offline-scripted`, the provider's model id, `replay`. */
export function modelId(spec: ModelSpec): string {
  if (spec.kind === 'offline') return 'offline-scripted';
  if (spec.kind === 'anthropic' || spec.kind === 'openai') return spec.model;
  if (spec.kind === 'record') return modelId(spec.inner);
  if (spec.kind === 'replay') return 'replay';
  return 'module';
}

/** Dollars `usage` cost on the provider `spec` runs (null: no price, a local or the offline model, a replay). */
export function costWith(spec: ModelSpec, usage: Parameters<typeof costOf>[0]): number | null {
  const provider = providerSpec(spec);
  if (provider.kind !== 'anthropic' && provider.kind !== 'openai') return null;
  // OpenAI counts cached tokens inside the input; Anthropic apart.
  return costOf(usage, provider.model, provider.kind === 'openai');
}

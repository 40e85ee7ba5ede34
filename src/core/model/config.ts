import path from 'node:path';
import { ConfigError } from '../errors.js';
import { closestWord } from '../words.js';
import { recordFolderProblem } from './recording.js';
import type { AnyProvider, Env, SpecOf } from './provider.js';
import { detectAnthropic } from './providers/anthropic/detect.js';
import type { AnthropicSettings } from './providers/anthropic/settings.js';
import type { OfflineSettings } from './providers/offline/index.js';
import type { OpenAISettings } from './providers/openai/settings.js';
import { BUILTIN_PROVIDERS, type BuiltinSpec } from './providers/registry.js';
import type { ProviderRegistry } from './registry.js';
import type { AnySpec, ModelSpec } from './spec.js';

/** The built-in providers' ids, in precedence order. */
export const PROVIDERS = BUILTIN_PROVIDERS.ids as readonly [string, ...string[]];

export type AnthropicModelConfig = { kind: 'anthropic' } & AnthropicSettings;
export type OpenAIModelConfig = { kind: 'openai' } & OpenAISettings;
export type OfflineModelConfig = { kind: 'offline' } & OfflineSettings;
/** A built-in provider's spec, as the environment and flags choose it. */
export type ModelConfig = BuiltinSpec;

export interface ModelOverrides {
  /** --record <dir>: write every model call of the session there. */
  record?: string;
  /** --replay <dir>: serve a recording's responses instead of calling a provider. */
  replay?: string;
  /** --provider (else AUTOTEAM_PROVIDER, else inferred from the keys set). */
  provider?: string;
  /** --model, for every role (else MODEL_ID, else the provider's default). */
  model?: string;
  /** How to name `provider` in an error (default `--provider`; the config file says `provider`). */
  providerLabel?: string;
}

/**
 * The model every teammate runs on, from the environment (after dotenv) and the flags: the one place
 * that decides the provider, by asking the registry's providers in order. With none named, the first
 * whose `detect` finds its settings in `env` is chosen (built in: Anthropic, an OpenAI-compatible
 * server, the offline model). Only the providers read their variables; this reads the choice itself
 * (AUTOTEAM_PROVIDER).
 */
export function loadModelSpec(env: Env, overrides?: ModelOverrides): ModelConfig;
export function loadModelSpec<P extends AnyProvider>(env: Env, overrides: ModelOverrides, registry: ProviderRegistry<P>): SpecOf<P>;
export function loadModelSpec(env: Env, overrides: ModelOverrides = {}, registry: ProviderRegistry = BUILTIN_PROVIDERS): SpecOf<AnyProvider> {
  const named = overrides.provider?.trim() || env.AUTOTEAM_PROVIDER?.trim() || undefined;
  const flag = overrides.provider?.trim() ? (overrides.providerLabel ?? '--provider') : 'AUTOTEAM_PROVIDER';
  const chosen = named === undefined ? undefined : registry.get(named);
  if (named !== undefined && !chosen) throw new ConfigError(`${flag} must be one of ${registry.ids.join(', ')}, got '${named}'`);
  const model = overrides.model?.trim() || undefined;
  if (overrides.model !== undefined && !model) throw new ConfigError('--model needs a model id');
  const ahead: string[] = [];
  for (const provider of chosen ? [chosen] : registry.providers) {
    const settings = provider.detect(env, { ...(model ? { model } : {}), ...(chosen ? { namedBy: flag } : {}), ahead: [...ahead] });
    if (settings) return { kind: provider.id, ...settings };
    if (chosen) throw new ConfigError(`${flag} ${provider.id} needs ${provider.needs}`);
    ahead.push(...provider.signals);
  }
  throw new ConfigError(`no model provider is configured: set ${ahead.join(' or ')}`);
}

/** The model spec of a session: the provider (`loadModelSpec`), recorded or replaced by a replay. */
export function resolveModelSpec(env: Env, overrides?: ModelOverrides): ModelSpec;
export function resolveModelSpec(env: Env, overrides: ModelOverrides, registry: ProviderRegistry): AnySpec;
export function resolveModelSpec(env: Env, overrides: ModelOverrides = {}, registry: ProviderRegistry = BUILTIN_PROVIDERS): AnySpec {
  if (overrides.replay !== undefined && overrides.record !== undefined) throw new ConfigError('--record and --replay contradict each other: give one');
  if (overrides.replay !== undefined) {
    if (!overrides.replay.trim()) throw new ConfigError('--replay needs the folder of a recording');
    return { kind: 'replay', dir: path.resolve(overrides.replay) };
  }
  const spec = loadModelSpec(env, overrides, registry);
  if (overrides.record === undefined) return spec;
  if (!overrides.record.trim()) throw new ConfigError('--record needs a folder to write the calls to');
  // Said before anything starts: a file where the folder would go.
  const problem = recordFolderProblem(overrides.record);
  if (problem) throw new ConfigError(`--record ${overrides.record}: ${problem}`);
  return { kind: 'record', dir: path.resolve(overrides.record), inner: spec };
}

/**
 * A model as /model names it: a provider (`offline`; `anthropic`, `openai`: its default model),
 * `<provider>:<model id>`, or a bare model id (the provider chosen as for --model). A model id with a
 * colon in it (Ollama's `llama3:8b`) goes after its provider: `openai:llama3:8b`.
 */
export function parseModelChoice(text: string, registry: ProviderRegistry = BUILTIN_PROVIDERS): ModelOverrides {
  const value = text.trim();
  const ids = registry.ids.join(', ');
  if (!value || /\s/.test(value)) throw new ConfigError(`a model is one word: ${ids}, <provider>:<model id>, or a model id`);
  const lower = value.toLowerCase();
  if (registry.get(lower)) return { provider: lower, providerLabel: 'provider' };
  const colon = value.indexOf(':');
  if (colon < 0) return { model: value };
  const named = value.slice(0, colon);
  const provider = registry.get(named.toLowerCase());
  const model = value.slice(colon + 1);
  if (!provider) {
    // A slip of the provider's name (`opnai:gpt-4.1`) is named; else it may be a model id with a colon.
    const near = closestWord(named.toLowerCase(), registry.ids);
    if (near) throw new ConfigError(`unknown provider '${named}' — did you mean ${near}${model ? `:${model}` : ''}? (providers: ${ids})`);
    // `bogus:` is a provider's name and no model: suggesting `openai:bogus:` would read as nonsense.
    if (!model) throw new ConfigError(`unknown provider '${named}' (providers: ${ids})`);
    throw new ConfigError(`unknown provider '${named}' (providers: ${ids}; a model id with a colon goes after its provider, e.g. openai:${value})`);
  }
  if (provider.noModelIds) throw new ConfigError(provider.noModelIds);
  if (!model) throw new ConfigError(`'${value}' names no model id after the provider`);
  return { provider: provider.id, model, providerLabel: 'provider' };
}

/** /model's text as a model spec in `env`; a model id no provider there can run is refused, not run offline. */
export function resolveModelChoice(text: string, env: Env): ModelConfig;
export function resolveModelChoice(text: string, env: Env, registry: ProviderRegistry): SpecOf<AnyProvider>;
export function resolveModelChoice(text: string, env: Env, registry: ProviderRegistry = BUILTIN_PROVIDERS): SpecOf<AnyProvider> {
  const choice = parseModelChoice(text, registry);
  const spec = loadModelSpec(env, choice, registry);
  if (choice.model && registry.get(spec.kind)?.noModelIds) {
    const serving = registry.providers.filter((provider) => !provider.noModelIds);
    const keys = serving.flatMap((provider) => provider.signals.slice(0, 1)).join(' or ');
    const named = serving.map((provider) => `${provider.id}:${choice.model}`).join(', ');
    throw new ConfigError(`no provider here runs '${choice.model}': set ${keys}, or name one (${named})`);
  }
  return spec;
}

/**
 * The Anthropic provider's spec in `env`, or the offline model: how the first version chose, kept for
 * callers that only ever knew Anthropic.
 */
export function loadModelConfig(env: Env): AnthropicModelConfig | OfflineModelConfig {
  const anthropic = detectAnthropic(env);
  return anthropic ? { kind: 'anthropic', ...anthropic } : { kind: 'offline', reason: 'neither ANTHROPIC_API_KEY nor ANTHROPIC_AUTH_TOKEN is set' };
}

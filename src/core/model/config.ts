import path from 'node:path';
import { ConfigError } from '../errors.js';
import type { ModelSpec } from './factory.js';
import { type ModelConfig, loadModelConfig as loadAnthropicConfig } from './providers/anthropic-config.js';
import { loadOpenAIConfig } from './providers/openai-config.js';

/** A small, current OpenAI model; any id works with a compatible server (`--model`, MODEL_ID). */
export const DEFAULT_OPENAI_MODEL = 'gpt-4.1-mini';

export const PROVIDERS = ['anthropic', 'openai', 'offline'] as const;
export type Provider = (typeof PROVIDERS)[number];

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

type Env = Record<string, string | undefined>;

/**
 * The model every teammate runs on, from the environment (after dotenv) and the flags: the one place
 * that decides the provider. With none named: ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN → Anthropic;
 * else OPENAI_API_KEY or OPENAI_BASE_URL → an OpenAI-compatible server; else the offline model.
 */
export function loadModelSpec(env: Env = process.env, overrides: ModelOverrides = {}): ModelConfig {
  const read = (name: string): string | undefined => env[name]?.trim() || undefined;
  const named = overrides.provider?.trim() || read('AUTOTEAM_PROVIDER');
  const flag = overrides.provider?.trim() ? (overrides.providerLabel ?? '--provider') : 'AUTOTEAM_PROVIDER';
  if (named !== undefined && !(PROVIDERS as readonly string[]).includes(named)) {
    throw new ConfigError(`${flag} must be one of ${PROVIDERS.join(', ')}, got '${named}'`);
  }
  const model = overrides.model?.trim() || undefined;
  if (overrides.model !== undefined && !model) throw new ConfigError('--model needs a model id');
  const anthropic = Boolean(read('ANTHROPIC_API_KEY') || read('ANTHROPIC_AUTH_TOKEN'));
  const openai = Boolean(read('OPENAI_API_KEY') || read('OPENAI_BASE_URL'));
  const provider = (named ?? (anthropic ? 'anthropic' : openai ? 'openai' : 'offline')) as Provider;
  switch (provider) {
    case 'offline':
      return { kind: 'offline', reason: named ? `${flag} offline` : 'no ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN, OPENAI_API_KEY or OPENAI_BASE_URL is set' };
    case 'anthropic': {
      const config = loadAnthropicConfig(env);
      if (config.kind !== 'anthropic') throw new ConfigError(`${flag} anthropic needs ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN`);
      return model ? { ...config, model } : config;
    }
    case 'openai': {
      const config = loadOpenAIConfig(env, model ?? read('MODEL_ID') ?? DEFAULT_OPENAI_MODEL);
      if (!config) throw new ConfigError(`${flag} openai needs OPENAI_API_KEY, or OPENAI_BASE_URL for a local server`);
      return config;
    }
  }
}

/** The model spec of a session: the provider (`loadModelSpec`), recorded or replaced by a replay. */
export function resolveModelSpec(env: Env = process.env, overrides: ModelOverrides = {}): ModelSpec {
  if (overrides.replay !== undefined && overrides.record !== undefined) throw new ConfigError('--record and --replay contradict each other: give one');
  if (overrides.replay !== undefined) {
    if (!overrides.replay.trim()) throw new ConfigError('--replay needs the folder of a recording');
    return { kind: 'replay', dir: path.resolve(overrides.replay) };
  }
  const spec = loadModelSpec(env, overrides);
  if (overrides.record === undefined) return spec;
  if (!overrides.record.trim()) throw new ConfigError('--record needs a folder to write the calls to');
  return { kind: 'record', dir: path.resolve(overrides.record), inner: spec };
}

/**
 * A model as /model names it: `offline`, a provider (`anthropic`, `openai`: its default model),
 * `<provider>:<model id>`, or a bare model id (the provider chosen as for --model). A model id with a
 * colon in it (Ollama's `llama3:8b`) goes after its provider: `openai:llama3:8b`.
 */
export function parseModelChoice(text: string): ModelOverrides {
  const value = text.trim();
  const choices = `${PROVIDERS.join(', ')}, <provider>:<model id>, or a model id`;
  if (!value || /\s/.test(value)) throw new ConfigError(`a model is one word: ${choices}`);
  const lower = value.toLowerCase();
  if ((PROVIDERS as readonly string[]).includes(lower)) return { provider: lower, providerLabel: 'provider' };
  const colon = value.indexOf(':');
  if (colon < 0) return { model: value };
  const provider = value.slice(0, colon).toLowerCase();
  const model = value.slice(colon + 1);
  if (!(PROVIDERS as readonly string[]).includes(provider)) {
    throw new ConfigError(`unknown provider '${value.slice(0, colon)}' (providers: ${PROVIDERS.join(', ')}; a model id with a colon goes after its provider, e.g. openai:${value})`);
  }
  if (provider === 'offline') throw new ConfigError(`the offline model has no model ids: say 'offline'`);
  if (!model) throw new ConfigError(`'${value}' names no model id after the provider`);
  return { provider, model, providerLabel: 'provider' };
}

/** /model's text as a model spec in `env`; a model id no provider there can run is refused, not run offline. */
export function resolveModelChoice(text: string, env: Env): ModelConfig {
  const choice = parseModelChoice(text);
  const spec = loadModelSpec(env, choice);
  if (choice.model && spec.kind === 'offline') {
    throw new ConfigError(`no provider here runs '${choice.model}': set ANTHROPIC_API_KEY or OPENAI_API_KEY, or name one (anthropic:${choice.model}, openai:${choice.model})`);
  }
  return spec;
}

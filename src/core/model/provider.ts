import type { z } from 'zod';
import type { PriceTable } from './pricing.js';
import type { ModelClient, Usage } from './types.js';

/** An environment as a provider reads it: the CLI passes its own (after dotenv), a test an object. */
export type Env = Readonly<Record<string, string | undefined>>;

/** What the chooser tells a provider's `detect` besides the environment. */
export interface DetectChoice {
  /** `--model` (or a config's `models.<role>.model`): wins over the provider's own default and MODEL_ID. */
  model?: string;
  /** How the provider was named (`--provider`, `AUTOTEAM_PROVIDER`, `provider`); absent when it is inferred. */
  namedBy?: string;
  /** The variables that would have chosen a provider ahead of this one (the offline model names them). */
  ahead: readonly string[];
}

/**
 * A model provider, registered as a value (see providers/registry.ts). Only `detect` reads the
 * environment; everything else works from the settings it returned, which are plain data (they cross
 * `postMessage` to worker threads inside a ModelSpec as `{kind: id, ...settings}`).
 */
export interface Provider<Id extends string = string, S extends object = object> {
  readonly id: Id;
  /** What `--provider <id>` needs in the environment, as an error says it: `ANTHROPIC_API_KEY or …`. */
  readonly needs: string;
  /** The variables whose presence chooses this provider when none is named, the one to suggest first. */
  readonly signals: readonly string[];
  /** Why `<id>:<model id>` is refused, for a provider that serves no model ids (else absent). */
  readonly noModelIds?: string;
  /** Its settings from `env`, or null when `env` does not configure it; a bad value throws a ConfigError. */
  detect(env: Env, choice: DetectChoice): S | null;
  /** The settings' shape: a spec crossing into a thread is checked against it before `create`. */
  readonly settingsSchema: z.ZodType<S>;
  /** The client (a provider that needs an SDK loads it here, so choosing one never loads it). */
  create(settings: S): Promise<ModelClient>;
  /** What the UI says it runs on (`hint`: say how to get something better, where there is something to say). Never a secret. */
  describe(settings: S, hint: boolean): string;
  /** The model id, for machines (a JSON summary). */
  modelId(settings: S): string;
  /** Dollars `usage` costs on `model` at `prices`, or null when the model has no price. */
  cost(model: string, usage: PricedUsage, prices: PriceTable): number | null;
}

export type PricedUsage = Pick<Usage, 'inputTokens' | 'outputTokens'> & Partial<Pick<Usage, 'cacheReadTokens'>>;

// `any` settings: a list of providers holds each with its own settings type.
export type AnyProvider = Provider<string, any>;

/** A provider's spec as it travels: its id under `kind`, then its settings. */
export type SpecOf<P> = P extends Provider<infer Id, infer S> ? { kind: Id } & S : never;

import type { BuiltinSpec } from './providers/registry.js';

/**
 * How a thread builds its model: plain data, so it crosses `postMessage`. A provider's spec is its id
 * under `kind` and its settings (`{kind: 'anthropic', model, apiKey}`); the other kinds wrap or replace
 * a provider.
 */

/** A provider's spec, for any registry: its id and its settings (checked against its schema when used). */
export interface ProviderSpec {
  readonly kind: string;
  readonly [setting: string]: unknown;
}

/** Loads a ModelClient factory from a file: the way tests put a fake model behind the interface in a worker. */
export interface ModuleSpec {
  kind: 'module';
  path: string;
  exportName?: string;
  options?: unknown;
}

/** Every call of `inner` written to `dir` (--record). */
export interface RecordSpec<Inner> {
  kind: 'record';
  dir: string;
  inner: Inner;
}

/** The calls recorded in `dir` served instead of a provider (--replay). */
export interface ReplaySpec {
  kind: 'replay';
  dir: string;
}

/** A model of the built-in providers, or a wrapper: what a session hands its threads. */
export type ModelSpec = BuiltinSpec | ModuleSpec | RecordSpec<ModelSpec> | ReplaySpec;

/** A model of any registry's providers, or a wrapper. */
export type AnySpec = ProviderSpec | ModuleSpec | RecordSpec<AnySpec> | ReplaySpec;

export type WrapperSpec = ModuleSpec | RecordSpec<AnySpec> | ReplaySpec;

export function isWrapper(spec: AnySpec): spec is WrapperSpec {
  return spec.kind === 'module' || spec.kind === 'record' || spec.kind === 'replay';
}

/** The provider under a recording (the spec itself otherwise). */
export function providerSpec<S extends AnySpec>(spec: S): S {
  return spec.kind === 'record' ? providerSpec((spec as RecordSpec<S>).inner) : spec;
}

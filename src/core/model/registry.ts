import { ConfigError } from '../errors.js';
import type { AnyProvider } from './provider.js';

/** The kinds of spec that wrap or replace a provider (spec.ts): no provider may take these ids. */
export const WRAPPER_KINDS = ['module', 'record', 'replay'] as const;

/**
 * The providers a process can choose from, in precedence order: with none named, the first whose
 * `detect` finds settings in the environment is chosen (the offline model, last, always does). A value,
 * passed to whoever chooses, lists, validates or builds models; nothing registers into a global.
 */
export interface ProviderRegistry<P extends AnyProvider = AnyProvider> {
  readonly providers: readonly P[];
  /** The ids, in precedence order (`--provider`'s choices). */
  readonly ids: readonly string[];
  get(id: string): P | undefined;
}

export function providerRegistry<const P extends AnyProvider>(providers: readonly P[]): ProviderRegistry<P> {
  const byId = new Map<string, P>();
  for (const provider of providers) {
    if (!/^[a-z][a-z0-9-]*$/.test(provider.id)) throw new ConfigError(`provider id '${provider.id}': lower-case letters, digits and -`);
    if ((WRAPPER_KINDS as readonly string[]).includes(provider.id)) throw new ConfigError(`provider id '${provider.id}' is taken by the ${provider.id} spec`);
    if (byId.has(provider.id)) throw new ConfigError(`provider '${provider.id}' is registered twice`);
    byId.set(provider.id, provider);
  }
  return { providers: [...providers], ids: [...byId.keys()], get: (id) => byId.get(id) };
}

import type { SpecOf } from '../provider.js';
import { providerRegistry } from '../registry.js';
import { anthropicProvider } from './anthropic/index.js';
import { offlineProvider } from './offline/index.js';
import { openAIProvider } from './openai/index.js';

/**
 * The providers autoteam ships, in precedence order: with none named, the first the environment
 * configures is chosen. Adding one is a folder beside these and a line here.
 */
export const BUILTIN_PROVIDERS = providerRegistry([
  anthropicProvider,
  openAIProvider,
  offlineProvider, // always configured: last
]);

/** A spec of one of the built-in providers: what a worker thread can build. */
export type BuiltinSpec = SpecOf<(typeof BUILTIN_PROVIDERS.providers)[number]>;

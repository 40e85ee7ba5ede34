export * from './types.js';
export { AnthropicModel, type AnthropicModelOptions, type ModelLogger } from './providers/anthropic/client.js';
export { DEFAULT_MODEL_ID, DEFAULT_BASE_URL, DEFAULT_TIMEOUT_MS, DEFAULT_MAX_RETRIES, DEFAULT_MAX_TOKENS } from './providers/anthropic/settings.js';
export { loadModelConfig, type AnthropicModelConfig, type OfflineModelConfig, type ModelConfig } from './config.js';
export { ScriptedModel } from './scripted/scripted-model.js';
export { createModel, describeModel, type ModelSpec } from './factory.js';
export type { Provider, DetectChoice, Env } from './provider.js';
export { providerRegistry, type ProviderRegistry } from './registry.js';
export { BUILTIN_PROVIDERS } from './providers/registry.js';

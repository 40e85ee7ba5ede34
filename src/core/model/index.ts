export * from './types.js';
export {
  AnthropicModel,
  loadModelConfig,
  DEFAULT_MODEL_ID,
  DEFAULT_BASE_URL,
  DEFAULT_TIMEOUT_MS,
  DEFAULT_MAX_RETRIES,
  DEFAULT_MAX_TOKENS,
  type AnthropicModelOptions,
  type AnthropicModelConfig,
  type OfflineModelConfig,
  type ModelConfig,
  type ModelLogger,
} from './providers/anthropic.js';
export { ScriptedModel } from './scripted/scripted-model.js';
export { createModel, describeModel, type ModelSpec } from './factory.js';

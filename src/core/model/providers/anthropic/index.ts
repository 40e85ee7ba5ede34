import type { Provider } from '../../provider.js';
import { costOf } from '../../pricing.js';
import { detectAnthropic } from './detect.js';
import { type AnthropicSettings, anthropicSettingsSchema } from './settings.js';

/** Claude through the Messages API, or an Anthropic-compatible vendor (ANTHROPIC_BASE_URL). */
export const anthropicProvider: Provider<'anthropic', AnthropicSettings> = {
  id: 'anthropic',
  needs: 'ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN',
  signals: ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN'],
  detect: detectAnthropic,
  settingsSchema: anthropicSettingsSchema,
  async create(settings) {
    // The SDK is loaded only by threads that use it.
    const { AnthropicModel } = await import('./client.js');
    return new AnthropicModel(settings);
  },
  describe: (settings) => (settings.baseURL ? `${settings.model} via ${new URL(settings.baseURL).host}` : settings.model),
  modelId: (settings) => settings.model,
  // Anthropic counts cached input apart from `input_tokens`.
  cost: (model, usage, prices) => costOf(usage, model, false, prices),
};

import type { Provider } from '../../provider.js';
import { costOf } from '../../pricing.js';
import { detectOpenAI } from './detect.js';
import { type OpenAISettings, openAISettingsSchema } from './settings.js';

/** OpenAI, or any server that speaks chat completions (OpenRouter, Ollama, vLLM, LM Studio, llama.cpp). */
export const openAIProvider: Provider<'openai', OpenAISettings> = {
  id: 'openai',
  needs: 'OPENAI_API_KEY, or OPENAI_BASE_URL for a local server',
  signals: ['OPENAI_API_KEY', 'OPENAI_BASE_URL'],
  detect: detectOpenAI,
  settingsSchema: openAISettingsSchema,
  async create(settings) {
    const { OpenAIModel } = await import('./client.js');
    return new OpenAIModel(settings);
  },
  describe: (settings) => `${settings.model} via ${settings.baseURL ? new URL(settings.baseURL).host : 'OpenAI'}`,
  modelId: (settings) => settings.model,
  // OpenAI counts cached tokens inside the input.
  cost: (model, usage, prices) => costOf(usage, model, true, prices),
};

import { ConfigError } from '../../../errors.js';
import type { DetectChoice, Env } from '../../provider.js';
import { type AnthropicSettings, DEFAULT_MODEL_ID } from './settings.js';
import { checkBaseURL } from './url.js';

/**
 * The Anthropic settings in `env` (after dotenv), or null without ANTHROPIC_API_KEY or
 * ANTHROPIC_AUTH_TOKEN: the only place that reads ANTHROPIC_*. With both set, the API key wins, as in
 * the SDK.
 */
export function detectAnthropic(env: Env, choice: Pick<DetectChoice, 'model'> = {}): AnthropicSettings | null {
  const read = (name: string): string | undefined => env[name]?.trim() || undefined;
  const apiKey = read('ANTHROPIC_API_KEY');
  const authToken = read('ANTHROPIC_AUTH_TOKEN');
  if (!apiKey && !authToken) return null;

  const baseURL = read('ANTHROPIC_BASE_URL');
  if (baseURL !== undefined) checkBaseURL(baseURL);
  const timeoutText = read('ANTHROPIC_TIMEOUT_MS');
  let timeoutMs: number | undefined;
  if (timeoutText !== undefined) {
    timeoutMs = Number(timeoutText);
    if (!/^\d+$/.test(timeoutText) || !Number.isSafeInteger(timeoutMs) || timeoutMs <= 0) {
      throw new ConfigError(`ANTHROPIC_TIMEOUT_MS must be a positive whole number of milliseconds, got '${timeoutText}'`);
    }
  }
  const anthropicVersion = read('ANTHROPIC_VERSION');

  return {
    ...(apiKey ? { apiKey } : { authToken: authToken! }),
    model: choice.model ?? read('MODEL_ID') ?? DEFAULT_MODEL_ID,
    ...(baseURL !== undefined && { baseURL }),
    ...(timeoutMs !== undefined && { timeoutMs }),
    ...(anthropicVersion !== undefined && { anthropicVersion }),
  };
}

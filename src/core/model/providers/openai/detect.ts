import { ConfigError } from '../../../errors.js';
import type { DetectChoice, Env } from '../../provider.js';
import { DEFAULT_OPENAI_MODEL, type OpenAISettings } from './settings.js';
import { checkBaseURL } from './url.js';

/**
 * OPENAI_API_KEY, OPENAI_BASE_URL and OPENAI_TIMEOUT_MS from `env` (without loading the SDK), or null
 * when neither a key nor a base URL is set: the only place that reads OPENAI_*.
 */
export function detectOpenAI(env: Env, choice: Pick<DetectChoice, 'model'> = {}): OpenAISettings | null {
  const read = (name: string): string | undefined => env[name]?.trim() || undefined;
  const apiKey = read('OPENAI_API_KEY');
  const baseURL = read('OPENAI_BASE_URL');
  if (!apiKey && !baseURL) return null;
  if (baseURL !== undefined) checkBaseURL(baseURL);
  const timeoutText = read('OPENAI_TIMEOUT_MS');
  const timeoutMs = timeoutText === undefined ? undefined : Number(timeoutText);
  if (timeoutText !== undefined && (!/^\d+$/.test(timeoutText) || !timeoutMs)) {
    throw new ConfigError(`OPENAI_TIMEOUT_MS must be a positive whole number of milliseconds, got '${timeoutText}'`);
  }
  const model = choice.model ?? read('MODEL_ID') ?? DEFAULT_OPENAI_MODEL;
  return { model, ...(baseURL ? { baseURL } : {}), ...(apiKey ? { apiKey } : {}), ...(timeoutMs ? { timeoutMs } : {}) };
}

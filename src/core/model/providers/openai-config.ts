import { ConfigError } from '../../errors.js';

export interface OpenAIModelConfig {
  kind: 'openai';
  model: string;
  /** The API root including `/v1` (OPENAI_BASE_URL): OpenAI, OpenRouter, Ollama, vLLM, LM Studio, llama.cpp. */
  baseURL?: string;
  /** OPENAI_API_KEY; a local server needs none. */
  apiKey?: string;
  timeoutMs?: number;
}

type Env = Record<string, string | undefined>;

/**
 * Reads OPENAI_API_KEY, OPENAI_BASE_URL and OPENAI_TIMEOUT_MS (without loading the SDK), or null when
 * neither a key nor a base URL is set. `model/config.ts` decides whether this provider is used.
 */
export function loadOpenAIConfig(env: Env, model: string): OpenAIModelConfig | null {
  const read = (name: string): string | undefined => env[name]?.trim() || undefined;
  const apiKey = read('OPENAI_API_KEY');
  const baseURL = read('OPENAI_BASE_URL');
  if (!apiKey && !baseURL) return null;
  if (baseURL !== undefined) {
    let url: URL;
    try {
      url = new URL(baseURL);
    } catch {
      throw new ConfigError('OPENAI_BASE_URL is not a URL');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError(`OPENAI_BASE_URL must be http(s), got '${url.protocol}'`);
    if (url.username || url.password) throw new ConfigError('OPENAI_BASE_URL must not contain user:password@');
  }
  const timeoutText = read('OPENAI_TIMEOUT_MS');
  const timeoutMs = timeoutText === undefined ? undefined : Number(timeoutText);
  if (timeoutText !== undefined && (!/^\d+$/.test(timeoutText) || !timeoutMs)) {
    throw new ConfigError(`OPENAI_TIMEOUT_MS must be a positive whole number of milliseconds, got '${timeoutText}'`);
  }
  return { kind: 'openai', model, ...(baseURL ? { baseURL } : {}), ...(apiKey ? { apiKey } : {}), ...(timeoutMs ? { timeoutMs } : {}) };
}

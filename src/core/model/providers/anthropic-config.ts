import { ConfigError } from '../../errors.js';
import type { OpenAIModelConfig } from './openai-config.js';

/*
 * The Anthropic provider's settings, read from the environment: apart from the client
 * (anthropic.ts), so that choosing a provider never loads the SDK.
 */

/**
 * A current Sonnet. Not 'claude-sonnet-4-5': SDK 1.x lists it as deprecated and then
 * `console.warn`s on every `messages.create` call, bypassing the client's logger.
 */
export const DEFAULT_MODEL_ID = 'claude-sonnet-5-5';
export const DEFAULT_BASE_URL = 'https://api.anthropic.com';
export const DEFAULT_TIMEOUT_MS = 120_000;
export const DEFAULT_MAX_RETRIES = 4;
export const DEFAULT_MAX_TOKENS = 8192;

export type AnthropicModelConfig = {
  kind: 'anthropic';
  model: string;
  baseURL?: string;
  timeoutMs?: number;
  anthropicVersion?: string;
} & ({ apiKey: string; authToken?: undefined } | { authToken: string; apiKey?: undefined });

export interface OfflineModelConfig {
  kind: 'offline';
  /** Why no real model is configured, for the UI. */
  reason: string;
}

export type ModelConfig = AnthropicModelConfig | OpenAIModelConfig | OfflineModelConfig;

type Env = Record<string, string | undefined>;

/**
 * Reads the model settings from the environment (call after dotenv). The only place that reads
 * ANTHROPIC_* for autoteam. With both ANTHROPIC_API_KEY and ANTHROPIC_AUTH_TOKEN set, the API key
 * wins, as in the SDK.
 */
export function loadModelConfig(env: Env = process.env): ModelConfig {
  const read = (name: string): string | undefined => {
    const value = env[name]?.trim();
    return value ? value : undefined;
  };
  const apiKey = read('ANTHROPIC_API_KEY');
  const authToken = read('ANTHROPIC_AUTH_TOKEN');
  if (!apiKey && !authToken) {
    return { kind: 'offline', reason: 'neither ANTHROPIC_API_KEY nor ANTHROPIC_AUTH_TOKEN is set' };
  }

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
    kind: 'anthropic',
    ...(apiKey ? { apiKey } : { authToken: authToken! }),
    model: read('MODEL_ID') ?? DEFAULT_MODEL_ID,
    ...(baseURL !== undefined && { baseURL }),
    ...(timeoutMs !== undefined && { timeoutMs }),
    ...(anthropicVersion !== undefined && { anthropicVersion }),
  };
}

/** Refuses an ANTHROPIC_BASE_URL fetch could not use, or whose error would print a password. */
export function checkBaseURL(value: string): void {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(`ANTHROPIC_BASE_URL is not a URL: '${displayURL(value)}'`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(`ANTHROPIC_BASE_URL must be http(s), got '${url.protocol}'`);
  }
  if (url.username || url.password) {
    // fetch refuses such URLs, and its error would print the password.
    throw new ConfigError(`ANTHROPIC_BASE_URL must not contain user:password@ ('${displayURL(value)}')`);
  }
}

/** A URL as shown in messages: no user info, no query (either may carry a secret). */
export function displayURL(value: string): string {
  try {
    const url = new URL(value);
    const path = url.pathname === '/' ? '' : url.pathname.replace(/\/$/, '');
    return `${url.protocol}//${url.host}${path}`;
  } catch {
    return '<invalid URL>';
  }
}

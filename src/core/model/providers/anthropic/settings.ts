import { z } from 'zod';
import { checkBaseURL } from './url.js';

/**
 * A current Sonnet. Not 'claude-sonnet-4-5': SDK 1.x lists it as deprecated and then
 * `console.warn`s on every `messages.create` call, bypassing the client's logger.
 */
export const DEFAULT_MODEL_ID = 'claude-sonnet-5-5';
export const DEFAULT_BASE_URL = 'https://api.anthropic.com';
export const DEFAULT_TIMEOUT_MS = 120_000;
export const DEFAULT_MAX_RETRIES = 4;
export const DEFAULT_MAX_TOKENS = 8192;

/** What the Anthropic provider runs with: exactly one credential, and where to send it. */
export type AnthropicSettings = {
  model: string;
  baseURL?: string;
  timeoutMs?: number;
  anthropicVersion?: string;
} & ({ apiKey: string; authToken?: undefined } | { authToken: string; apiKey?: undefined });

const urlCheck = (value: string, ctx: z.RefinementCtx): void => {
  try {
    checkBaseURL(value);
  } catch (error) {
    ctx.addIssue({ code: 'custom', message: (error as Error).message });
  }
};

export const anthropicSettingsSchema: z.ZodType<AnthropicSettings> = z
  .object({
    model: z.string().min(1),
    baseURL: z.string().superRefine(urlCheck).optional(),
    timeoutMs: z.number().int().positive().optional(),
    anthropicVersion: z.string().min(1).optional(),
    apiKey: z.string().min(1).optional(),
    authToken: z.string().min(1).optional(),
  })
  .strict()
  .superRefine((settings, ctx) => {
    if (!settings.apiKey === !settings.authToken) ctx.addIssue({ code: 'custom', path: ['apiKey'], message: 'give an API key or an auth token (exactly one)' });
  }) as z.ZodType<AnthropicSettings>;

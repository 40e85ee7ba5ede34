import { z } from 'zod';
import { checkBaseURL } from './url.js';

/** A small, current OpenAI model; any id works with a compatible server (`--model`, MODEL_ID). */
export const DEFAULT_OPENAI_MODEL = 'gpt-4.1-mini';
export const DEFAULT_OPENAI_BASE_URL = 'https://api.openai.com/v1';
export const DEFAULT_TIMEOUT_MS = 120_000;
export const DEFAULT_MAX_RETRIES = 4;
export const DEFAULT_MAX_TOKENS = 8192;

export type OpenAISettings = {
  model: string;
  /** The API root including `/v1` (OPENAI_BASE_URL): OpenAI, OpenRouter, Ollama, vLLM, LM Studio, llama.cpp. */
  baseURL?: string;
  /** OPENAI_API_KEY; a local server needs none. */
  apiKey?: string;
  timeoutMs?: number;
};

export const openAISettingsSchema: z.ZodType<OpenAISettings> = z
  .object({
    model: z.string().min(1),
    baseURL: z
      .string()
      .superRefine((value, ctx) => {
        try {
          checkBaseURL(value);
        } catch (error) {
          ctx.addIssue({ code: 'custom', message: (error as Error).message });
        }
      })
      .optional(),
    apiKey: z.string().min(1).optional(),
    timeoutMs: z.number().int().positive().optional(),
  })
  .strict()
  .superRefine((settings, ctx) => {
    if (!settings.apiKey && !settings.baseURL) ctx.addIssue({ code: 'custom', path: ['apiKey'], message: 'an API key, or a baseURL for a local server' });
  });

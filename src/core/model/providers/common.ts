import { ModelError } from '../../errors.js';

/** What the providers share: error text that is one line, and the cause of a failed connection. */

/** The useful part of a failed fetch (ECONNREFUSED, ENOTFOUND…), which sits a few causes deep. */
export function connectionDetail(error: Error): string {
  let current: unknown = error.cause;
  let fallback: string | undefined;
  for (let depth = 0; current instanceof Error && depth < 5; depth++) {
    const code = (current as NodeJS.ErrnoException).code;
    if (typeof code === 'string') return code;
    if (current.message && current.message !== 'fetch failed') fallback ??= current.message;
    current = current.cause;
  }
  return fallback ?? 'connection failed';
}

export function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

/**
 * A 404 of the API's path or an answer that is not the API's means a wrong base URL on an endpoint's
 * first call (fatal: no retry mends it). From an endpoint that has answered as its API before, it is
 * a passing fault (a gateway's error page, a body cut short), retried as any other model error.
 */
export class EndpointHistory {
  #answered = false;

  answered(): void {
    this.#answered = true;
  }

  judge(error: ModelError): ModelError {
    return this.#answered && (error.code === 'MODEL_ENDPOINT' || error.code === 'MODEL_BAD_RESPONSE') ? new ModelError(error.message, 'MODEL_ERROR', { cause: error }) : error;
  }
}

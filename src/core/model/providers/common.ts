import { ModelError } from '../../errors.js';
import { formatWait } from '../../sizes.js';
import type { ModelRequest } from '../types.js';

/** What the providers share: error text that is one line, and the cause of a failed connection. */

/** The smallest request a provider's warm() builds (and never sends). */
export const WARM_REQUEST: ModelRequest = { system: 'warm', messages: [{ role: 'user', content: 'warm' }], tools: [], maxTokens: 1 };

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
  // fetch's own refusal of the ports browsers block (1, 6000, 6667, …), before any connection: said as such.
  if (fallback === 'bad port') return 'bad port: fetch refuses this port, one browsers block; use another';
  return fallback ?? 'connection failed';
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

/** What a wrong base URL (or an endpoint that never answers) looks like on a client's first call, and a passing fault after a good answer. */
const PASSING_ONCE_ANSWERED = new Set(['MODEL_ENDPOINT', 'MODEL_BAD_RESPONSE', 'MODEL_TIMEOUT', 'MODEL_REFUSED']);

/**
 * A 404 of the API's path or an answer that is not the API's means a wrong base URL on an endpoint's
 * first call (fatal: no retry mends it), no answer to any of the call's requests in time an endpoint
 * that does not answer, and a refused request one no attempt of its task gets past (refusedError).
 * From an endpoint that has answered as its API before, each is a passing fault (a gateway's error
 * page, a body cut short, an overload, a request one conversation made too long), retried as any
 * other model error.
 */
export class EndpointHistory {
  #answered = false;

  answered(): void {
    this.#answered = true;
  }

  judge(error: ModelError): ModelError {
    return this.#answered && PASSING_ONCE_ANSWERED.has(error.code) ? new ModelError(error.message, 'MODEL_ERROR', { cause: error }) : error;
  }
}

/**
 * The words of an error response that is not the API's JSON (a proxy's text, a server's plain
 * message): the SDKs put its text in the error's message after the status. '' when the body was
 * JSON (the API's own fields say it) or empty; at most 200 characters (a gateway's HTML page).
 */
export function plainBody(error: { message: string; error?: unknown }, status: number): string {
  if (error.error !== undefined && error.error !== null) return '';
  const text = error.message.startsWith(`${status} `) ? error.message.slice(`${status} `.length) : error.message;
  return text === 'status code (no body)' ? '' : text.slice(0, 200);
}

/**
 * A request the endpoint refused with a 4xx status no retry changes (not 401, 403 or 404, which say
 * more, nor 408, 409 or 429, which the SDK retries): 400, 413, 422, …. MODEL_REFUSED on a client's
 * first call fails its task at once rather than spending the task's five attempts, over a minute of
 * back-off, on a request refused the same way each time (a server or model that does not take tools,
 * a requirement too long for the model); the teammate goes on to its next task. After a good answer
 * (EndpointHistory) a refusal is a passing MODEL_ERROR: the next attempt starts its conversation anew.
 */
export function refusedError(said: string, site: { endpoint: string; id: string; clean(message: string): string }, cause?: ErrorOptions): ModelError {
  return new ModelError(site.clean(`Model API at ${site.endpoint} refused the request for model '${site.id}' (${said})`), 'MODEL_REFUSED', cause);
}

/** The longest wait an endpoint's retry-after may put on a call in flight; a longer one is the task's to wait. */
export const LONGEST_RETRY_AFTER_MS = 60_000;

/** How long a response's `retry-after-ms` or `retry-after` (seconds, or a date) asks to wait, or null. */
export function retryAfterMs(headers: Pick<Headers, 'get'> | null | undefined, now = Date.now()): number | null {
  // As the SDKs read them: a retry-after-ms of 0 counts as none.
  const ms = Number.parseFloat(headers?.get('retry-after-ms') ?? '');
  if (Number.isFinite(ms) && ms > 0) return ms;
  const after = headers?.get('retry-after');
  if (!after) return null;
  const seconds = Number.parseFloat(after);
  if (Number.isFinite(seconds)) return seconds * 1000;
  const at = Date.parse(after);
  return Number.isFinite(at) ? at - now : null;
}

/**
 * The SDKs sleep through any retry-after before trying again (an hour, if the endpoint asks), with
 * nothing said meanwhile. One longer than LONGEST_RETRY_AFTER_MS is not theirs to sleep: the call
 * fails at once (`x-should-retry: false`), and its task waits instead, said on the board
 * (`ModelError.retryAfterMs`, `afterRateLimit`).
 */
export function politeFetch<F extends (input: any, init?: any) => Promise<Response>>(inner: F): F {
  return (async (input: unknown, init?: unknown) => {
    const response = await inner(input, init);
    const wait = response.ok ? null : retryAfterMs(response.headers);
    if (wait === null || wait <= LONGEST_RETRY_AFTER_MS) return response;
    const headers = new Headers(response.headers);
    headers.set('x-should-retry', 'false');
    return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
  }) as F;
}

/** What a model error says of a retry-after too long for a call to wait, and the wait for its task; null for none. */
export function afterRateLimit(headers: Pick<Headers, 'get'> | null | undefined): { said: string; retryAfterMs: number } | null {
  const wait = retryAfterMs(headers);
  if (wait === null || wait <= LONGEST_RETRY_AFTER_MS) return null;
  return { said: `, and asks for no request for ${formatWait(wait)} (retry-after)`, retryAfterMs: wait };
}

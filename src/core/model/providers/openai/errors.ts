import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import { ModelError } from '../../../errors.js';
import { afterRateLimit, connectionDetail, isRecord, plainBody, refusedError } from '../common.js';

/** What an error's advice names: the client's model, endpoint and limits, and how it cleans text. */
export interface CallSite {
  id: string;
  endpoint: string;
  timeoutMs: number;
  maxRetries: number;
  /** One line, bounded, never the key. */
  clean(message: string): string;
}

/** A failed call as one line that says what to check; never the key. */
export function toModelError(error: unknown, signal: AbortSignal | undefined, site: CallSite): ModelError {
  if (signal?.aborted || error instanceof APIUserAbortError) return new ModelError(`Call to ${site.id} was aborted`, 'MODEL_ABORTED');
  if (error instanceof APIConnectionTimeoutError) {
    return new ModelError(site.clean(`No answer from ${site.endpoint} within ${site.timeoutMs} ms (${site.maxRetries} retries): check the endpoint, or raise OPENAI_TIMEOUT_MS`), 'MODEL_TIMEOUT');
  }
  if (error instanceof APIConnectionError) {
    return new ModelError(site.clean(`Cannot reach the model API at ${site.endpoint} (${connectionDetail(error)}): check OPENAI_BASE_URL and the network`), 'MODEL_UNREACHABLE');
  }
  if (error instanceof APIError && typeof error.status === 'number') {
    const body = isRecord(error.error) && typeof error.error.message === 'string' ? error.error.message : plainBody(error, error.status);
    // As the Anthropic lines say it: the status, the error's type, and its code where it adds one
    // (context_length_exceeded); not a proxy's "None", nor its status again as the code.
    const type = typeof error.type === 'string' && error.type !== 'None' ? error.type : '';
    const code = typeof error.code === 'string' && ![type, String(error.status), 'None'].includes(error.code) ? ` (${error.code})` : '';
    const said = `${[String(error.status), type].filter(Boolean).join(' ')}${code}${body ? `: ${body}` : ''}`;
    if (error.status === 401 || error.status === 403) {
      return new ModelError(site.clean(`OPENAI_API_KEY was rejected by ${site.endpoint} (${said}): check the key`), 'MODEL_AUTH');
    }
    if (error.status === 404) {
      const aboutModel = /model/i.test(body) || body.includes(site.id);
      return aboutModel
        ? new ModelError(site.clean(`Model '${site.id}' was not found at ${site.endpoint} (${said}): set --model or MODEL_ID to a model this endpoint serves`), 'MODEL_NOT_FOUND')
        : new ModelError(site.clean(`${site.endpoint}/chat/completions does not exist (${said}): check OPENAI_BASE_URL (the API root, with /v1)`), 'MODEL_ENDPOINT');
    }
    const limited = afterRateLimit(error.headers);
    if (limited) return new ModelError(site.clean(`Model API at ${site.endpoint} answered ${said} (model '${site.id}')${limited.said}`), 'MODEL_ERROR', { retryAfterMs: limited.retryAfterMs });
    const retried = error.status === 408 || error.status === 409 || error.status === 429 || error.status >= 500;
    if (!retried && error.status >= 400) return refusedError(said, site);
    return new ModelError(site.clean(`Model API at ${site.endpoint} answered ${said}${retried && site.maxRetries ? ` — given up after ${site.maxRetries} retries` : ''} (model '${site.id}')`), 'MODEL_ERROR');
  }
  // The SDK parses a body sent as JSON that is not: no chat completions API answers so.
  if (error instanceof SyntaxError) return new ModelError(site.clean(`${site.endpoint}/chat/completions answered with a body that is not JSON (${error.message}): check OPENAI_BASE_URL`), 'MODEL_BAD_RESPONSE');
  return new ModelError(site.clean(`Call to ${site.id} at ${site.endpoint} failed: ${error instanceof Error ? error.message : String(error)}`), 'MODEL_ERROR');
}

/**
 * `inner`, with an error response's JSON put in the shape the SDK reads its words from,
 * `{"error": {"message", "type", "code"}}`: compatible servers answer `{"message", "type", "code"}`
 * at the top (vLLM) or `{"error": "text"}`, and the SDK kept neither, so the line said only `(400)`.
 * Any other body passes as it came.
 */
export function readableErrors<F extends (input: any, init?: any) => Promise<Response>>(inner: F): F {
  return (async (input: unknown, init?: unknown) => {
    const response = await inner(input, init);
    // Only an error that can carry a body (a 304 cannot): a Response is built again from it below.
    if (response.ok || !/json/i.test(response.headers.get('content-type') ?? '') || response.status < 400 || response.status > 599) return response;
    // A body that breaks off is said as the SDK says one it cannot read: no words, the status kept.
    const text = await response.text().catch(() => '');
    let body: unknown = null;
    try {
      body = JSON.parse(text);
    } catch {
      // Not JSON after all: the SDK says the text.
    }
    const error = !isRecord(body) ? null : typeof body.error === 'string' ? { message: body.error } : body.error === undefined && typeof body.message === 'string' ? body : null;
    const headers = new Headers(response.headers);
    headers.delete('content-length');
    headers.delete('content-encoding');
    return new Response(error ? JSON.stringify({ error }) : text, { status: response.status, statusText: response.statusText, headers });
  }) as F;
}

/** A response that is no chat completion: the base URL points elsewhere. */
export function badResponseError(site: CallSite): ModelError {
  return new ModelError(site.clean(`${site.endpoint}/chat/completions did not answer with a chat completion: check OPENAI_BASE_URL`), 'MODEL_BAD_RESPONSE');
}

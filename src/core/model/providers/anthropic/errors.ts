import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from '@anthropic-ai/sdk';
import { ModelError } from '../../../errors.js';
import { afterRateLimit, connectionDetail, plainBody, refusedError } from '../common.js';
import { oneLine } from '../../../words.js';

/** What an error's advice names: the client's model, endpoint and limits, and how it cleans text. */
export interface CallSite {
  id: string;
  /** The API root as shown in messages (no credentials, no query). */
  endpoint: string;
  timeoutMs: number;
  maxRetries: number;
  credentialName: 'ANTHROPIC_API_KEY' | 'ANTHROPIC_AUTH_TOKEN';
  /** One line, bounded, never the credential. */
  clean(message: string): string;
  /** The error as a cause, unless its text holds the credential. */
  safeCause(error: unknown): ErrorOptions | undefined;
}

/** A failed call as one line that says what to check; never the credential. */
export function toModelError(error: unknown, signal: AbortSignal | undefined, site: CallSite): ModelError {
  const cause = site.safeCause(error);
  if (signal?.aborted || error instanceof APIUserAbortError) {
    return new ModelError(`Call to ${site.id} was aborted`, 'MODEL_ABORTED', cause);
  }
  if (error instanceof APIConnectionTimeoutError) {
    return new ModelError(
      site.clean(`No answer from ${site.endpoint} within ${site.timeoutMs} ms (${site.maxRetries} retries): check the endpoint, or raise ANTHROPIC_TIMEOUT_MS`),
      'MODEL_TIMEOUT',
      cause,
    );
  }
  if (error instanceof APIConnectionError) {
    return new ModelError(
      site.clean(`Cannot reach the model API at ${site.endpoint} (${connectionDetail(error)}): check ANTHROPIC_BASE_URL and the network`),
      'MODEL_UNREACHABLE',
      cause,
    );
  }
  if (error instanceof APIError && typeof error.status === 'number') return statusError(error, error.status, cause, site);
  // The SDK parses a body sent as JSON that is not: no Messages API answers so.
  if (error instanceof SyntaxError) return new ModelError(site.clean(`${site.endpoint}/v1/messages answered with a body that is not JSON (${error.message}): check ANTHROPIC_BASE_URL`), 'MODEL_BAD_RESPONSE', cause);
  const detail = error instanceof Error ? error.message : String(error);
  return new ModelError(site.clean(`Call to ${site.id} at ${site.endpoint} failed: ${detail}`), 'MODEL_ERROR', cause);
}

/** A response that is no Messages API response: the base URL points elsewhere. */
export function badResponseError(message: unknown, site: CallSite): ModelError {
  const got = typeof message === 'string' ? `text '${oneLine(message, 80)}'` : typeof message;
  return new ModelError(site.clean(`${site.endpoint}/v1/messages did not answer with a Messages API response (got ${got}): check ANTHROPIC_BASE_URL`), 'MODEL_BAD_RESPONSE');
}

function statusError(error: APIError, status: number, cause: ErrorOptions | undefined, site: CallSite): ModelError {
  const apiMessage = error.apiMessage ?? (typeof error.error === 'string' ? error.error : null) ?? (plainBody(error, status) || null);
  const said = `${[String(status), error.type].filter(Boolean).join(' ')}${apiMessage ? `: ${apiMessage}` : ''}`;
  if (status === 401 || status === 403) {
    const advice =
      status === 403
        ? `check that the credential may use model '${site.id}'`
        : site.credentialName === 'ANTHROPIC_API_KEY'
          ? 'check the key, or set ANTHROPIC_AUTH_TOKEN instead if this endpoint expects a bearer token'
          : 'check the token, or set ANTHROPIC_API_KEY instead if this endpoint expects an x-api-key';
    return new ModelError(site.clean(`${site.credentialName} was rejected by ${site.endpoint} (${said}): ${advice}`), 'MODEL_AUTH', cause);
  }
  if (status === 404) {
    const text = `${apiMessage ?? ''}`.toLowerCase();
    if (text.includes('model') || text.includes(site.id.toLowerCase())) {
      return new ModelError(
        site.clean(`Model '${site.id}' was not found at ${site.endpoint} (${said}): set MODEL_ID to a model this endpoint serves`),
        'MODEL_NOT_FOUND',
        cause,
      );
    }
    return new ModelError(site.clean(`${site.endpoint}/v1/messages does not exist (${said}): check ANTHROPIC_BASE_URL (the API root, without /v1)`), 'MODEL_ENDPOINT', cause);
  }
  const limited = afterRateLimit(error.headers);
  if (limited) return new ModelError(site.clean(`Model API at ${site.endpoint} answered ${said} (model '${site.id}')${limited.said}`), 'MODEL_ERROR', { ...cause, retryAfterMs: limited.retryAfterMs });
  const retried = status === 408 || status === 409 || status === 429 || status >= 500;
  if (!retried && status >= 400) return refusedError(said, site, cause);
  const after = retried && site.maxRetries > 0 ? ` — given up after ${site.maxRetries} retries` : '';
  return new ModelError(site.clean(`Model API at ${site.endpoint} answered ${said}${after} (model '${site.id}')`), 'MODEL_ERROR', cause);
}

import { ConfigError } from '../../../errors.js';

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

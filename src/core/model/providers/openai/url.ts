import { ConfigError } from '../../../errors.js';

/** Refuses an OPENAI_BASE_URL from the environment that fetch could not use or whose error would print a password. */
export function checkBaseURL(value: string): void {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError('OPENAI_BASE_URL is not a URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError(`OPENAI_BASE_URL must be http(s), got '${url.protocol}'`);
  if (url.username || url.password) throw new ConfigError('OPENAI_BASE_URL must not contain user:password@');
}

/** The client's base URL, parsed; the error masks any user info. */
export function parseBaseURL(value: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(`OPENAI_BASE_URL is not a URL: '${value.replace(/\/\/[^@/]*@/, '//***@')}'`);
  }
  if (url.username || url.password) throw new ConfigError('OPENAI_BASE_URL must not contain user:password@');
  return url;
}

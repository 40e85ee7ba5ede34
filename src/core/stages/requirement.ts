import { AutoteamError } from '../errors.js';

/** The largest requirement a pipeline takes; every stage's task carries it. */
export const MAX_REQUIREMENT_BYTES = 100 * 1024;

/** Characters that show nothing: a text of only these and white space is blank. */
const INVISIBLE = /[\s\u200B-\u200D\u2060\uFEFF]/gu;

/** True when `text` holds nothing to read: white space and zero-width characters at most. */
export function isBlank(text: string): boolean {
  return text.replace(INVISIBLE, '') === '';
}

/** The requirement, trimmed; refused when it is blank (zero-width characters alone) or over MAX_REQUIREMENT_BYTES. */
export function checkRequirement(requirement: string): string {
  const text = requirement.trim();
  if (isBlank(text)) throw new AutoteamError('a requirement cannot be empty', 'INVALID_REQUIREMENT');
  const bytes = Buffer.byteLength(text);
  if (bytes > MAX_REQUIREMENT_BYTES) {
    throw new AutoteamError(
      `a requirement is at most ${MAX_REQUIREMENT_BYTES / 1024} KB (this one is ${Math.ceil(bytes / 1024)} KB): put the details in a file and refer to it`,
      'INVALID_REQUIREMENT',
    );
  }
  return text;
}

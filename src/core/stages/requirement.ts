import { AutoteamError } from '../errors.js';

/** The largest requirement a pipeline takes; every stage's task carries it. */
export const MAX_REQUIREMENT_BYTES = 100 * 1024;

/** White space and the characters that show nothing (zero-width spaces and joiners, the BOM), at either end. */
const INVISIBLE_ENDS = /^[\s\u200B-\u200D\u2060\uFEFF]+|[\s\u200B-\u200D\u2060\uFEFF]+$/gu;

/** `text` without white space or zero-width characters at either end. */
export function trimInvisible(text: string): string {
  return text.replace(INVISIBLE_ENDS, '');
}

/** True when `text` holds nothing to read: white space and zero-width characters at most. */
export function isBlank(text: string): boolean {
  return trimInvisible(text) === '';
}

/** A UTF-16 surrogate without its other half. */
const HALF_CHARACTER = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** The requirement, trimmed; refused when it is blank (zero-width characters alone), holds half a character or bytes that were not UTF-8, or is over MAX_REQUIREMENT_BYTES. */
export function checkRequirement(requirement: string): string {
  const text = requirement.trim();
  if (isBlank(text)) throw new AutoteamError('a requirement cannot be empty', 'INVALID_REQUIREMENT');
  // Half of a character (JSON's "\ud800"): what reaches a task file and a model would be U+FFFD, not what was meant.
  if (HALF_CHARACTER.test(text)) throw new AutoteamError('a requirement must be whole text: it holds half of a character (an unpaired UTF-16 surrogate)', 'INVALID_REQUIREMENT');
  // Bytes that are not UTF-8 (a body or a terminal in another encoding) reach it as U+FFFD, as the command line's arguments do.
  if (text.includes('\uFFFD')) throw new AutoteamError('a requirement must be UTF-8 text: this one holds bytes that are not (shown as �)', 'INVALID_REQUIREMENT');
  const bytes = Buffer.byteLength(text);
  if (bytes > MAX_REQUIREMENT_BYTES) {
    throw new AutoteamError(
      `a requirement is at most ${MAX_REQUIREMENT_BYTES / 1024} KB (this one is ${Math.ceil(bytes / 1024)} KB): put the details in a file and refer to it`,
      'INVALID_REQUIREMENT',
    );
  }
  return text;
}

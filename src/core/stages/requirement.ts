import { AutoteamError } from '../errors.js';

/** The largest requirement a pipeline takes; every stage's task carries it. */
export const MAX_REQUIREMENT_BYTES = 100 * 1024;

/** The requirement, trimmed; refused when it is empty or over MAX_REQUIREMENT_BYTES. */
export function checkRequirement(requirement: string): string {
  const text = requirement.trim();
  if (!text) throw new AutoteamError('a requirement cannot be empty', 'INVALID_REQUIREMENT');
  const bytes = Buffer.byteLength(text);
  if (bytes > MAX_REQUIREMENT_BYTES) {
    throw new AutoteamError(
      `a requirement is at most ${MAX_REQUIREMENT_BYTES / 1024} KB (this one is ${Math.ceil(bytes / 1024)} KB): put the details in a file and refer to it`,
      'INVALID_REQUIREMENT',
    );
  }
  return text;
}

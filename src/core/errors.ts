/** One error hierarchy for autoteam. Errors that cross `postMessage` travel as `{code, message}`. */
export class AutoteamError extends Error {
  readonly code: string;

  constructor(message: string, code = 'AUTOTEAM_ERROR', options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** A file on the board (task, inbox line, config) that does not parse or validate. */
export class BoardFileError extends AutoteamError {
  constructor(
    readonly path: string,
    detail: string,
  ) {
    super(`${path}: ${detail}`, 'BOARD_FILE_INVALID');
  }
}

export class NotFoundError extends AutoteamError {
  constructor(message: string) {
    super(message, 'NOT_FOUND');
  }
}

export class UnknownRecipientError extends AutoteamError {
  constructor(
    readonly recipient: string,
    readonly team: string,
    readonly members: readonly string[],
  ) {
    super(
      `'${recipient}' is not a member of team '${team}' (members: ${members.join(', ') || 'none'})`,
      'UNKNOWN_RECIPIENT',
    );
  }
}

/** A message refused because the recipient's inbox holds its limit already (MAX_INBOX_MB). */
export class InboxFullError extends AutoteamError {
  constructor(
    readonly inbox: string,
    readonly where: string,
    readonly limit: string,
  ) {
    super(`the inbox of '${inbox}' is full (${where}; the limit is ${limit}, MAX_INBOX_MB): the message was not delivered`, 'INBOX_FULL');
  }
}

/** A task over a size limit: posted too large, or a write that would make it unreadable. */
export class TaskTooLargeError extends AutoteamError {
  constructor(message: string) {
    super(message, 'TASK_TOO_LARGE');
  }
}

/** A model request that cannot be brought under MAX_REQUEST_TOKENS, even with every text cut. */
export class RequestTooLargeError extends AutoteamError {
  constructor(message: string) {
    super(message, 'REQUEST_TOO_LARGE');
  }
}

export class ConfigError extends AutoteamError {
  constructor(message: string) {
    super(message, 'CONFIG_ERROR');
  }
}

export class ModelError extends AutoteamError {
  constructor(message: string, code = 'MODEL_ERROR', options?: ErrorOptions) {
    super(message, code, options);
  }
}

/** Model errors no retry will fix (the SDK has already retried): bad key, unknown model, unreachable endpoint. */
export const FATAL_MODEL_CODES: ReadonlySet<string> = new Set(['MODEL_AUTH', 'MODEL_NOT_FOUND', 'MODEL_UNREACHABLE', 'CONFIG_ERROR', 'REPLAY_MISSING']);

export interface SerializedError {
  code: string;
  message: string;
}

export function serializeError(error: unknown): SerializedError {
  if (error instanceof AutoteamError) return { code: error.code, message: error.message };
  if (error instanceof Error) return { code: (error as NodeJS.ErrnoException).code ?? error.name, message: error.message };
  return { code: 'UNKNOWN', message: String(error) };
}

/**
 * Why `text` is not JSON, with the place as a person finds it in an editor: JSON.parse says
 * `at position 42`, this says `at line 4, column 3`; the end of the text is said as such.
 */
export function describeJsonError(error: unknown, text: string): string {
  const message = (error as Error).message;
  const where = (offset: number) => {
    const before = text.slice(0, offset).split('\n');
    return `line ${before.length}, column ${before.at(-1)!.length + 1}`;
  };
  const position = / at position (\d+)/.exec(message);
  if (position && Number(position[1]) >= text.trimEnd().length) return `not valid JSON (it ends early, at ${where(text.length)})`;
  if (position) return `not valid JSON (${message.replace(/ in JSON at position \d+.*| at position \d+.*/, '')} at ${where(Number(position[1]))})`;
  if (/end of (JSON )?input/i.test(message)) return `not valid JSON (it ends early, at ${where(text.length)})`;
  return `not valid JSON (${message})`;
}

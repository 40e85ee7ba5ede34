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
  /** How long the endpoint asked to be left alone (a rate limit's retry-after), when longer than a call waits: the task waits it. */
  readonly retryAfterMs?: number;

  constructor(message: string, code = 'MODEL_ERROR', options?: ErrorOptions & { retryAfterMs?: number }) {
    super(message, code, options);
    if (options?.retryAfterMs !== undefined) this.retryAfterMs = options.retryAfterMs;
  }
}

/**
 * Model errors no retry will fix (the SDK has already retried): a bad key, an unknown model, an
 * unreachable endpoint, a base URL that points at something else (no such API path, an answer
 * that is not the API's), and an endpoint that answered none of a call's requests in time (the
 * first and the SDK's retries, each given the whole timeout: tried again as a task's next attempt,
 * five of them made a silent endpoint a wait of 50 minutes at the default timeout).
 */
export const FATAL_MODEL_CODES: ReadonlySet<string> = new Set(['MODEL_AUTH', 'MODEL_NOT_FOUND', 'MODEL_UNREACHABLE', 'MODEL_TIMEOUT', 'MODEL_ENDPOINT', 'MODEL_BAD_RESPONSE', 'CONFIG_ERROR', 'REPLAY_MISSING']);

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
 * Why `text` is not JSON, with the place as a person finds it in an editor: `at line 4, column 3`
 * (JSON.parse says `at position 42`, or on Node 20 often no place at all, quoting the text around
 * it instead: then the place is found by scanning the text); the end of the text is said as such.
 */
export function describeJsonError(error: unknown, text: string): string {
  const message = (error as Error).message;
  const where = (offset: number) => {
    const before = text.slice(0, offset).split('\n');
    return `line ${before.length}, column ${before.at(-1)!.length + 1}`;
  };
  const given = / at position (\d+)/.exec(message);
  const offset = given ? Number(given[1]) : jsonSyntaxOffset(text);
  if (offset === null) return `not valid JSON (${message})`;
  if (offset >= text.trimEnd().length) return `not valid JSON (it ends early, at ${where(text.length)})`;
  // V8's reason without the text it quotes (`Unexpected token ']', ..."a"},\n ]..." is not valid JSON`).
  const reason = message.replace(/ in JSON at position \d+.*| at position \d+.*/s, '').replace(/, (\.\.\.)?".*$/s, '');
  return `not valid JSON (${reason} at ${where(offset)})`;
}

/** Where a JSON text first goes wrong (an offset), or null when it is valid JSON. */
export function jsonSyntaxOffset(text: string): number | null {
  let i = 0;
  const space = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i]!)) i++;
  };
  const fail = (): never => {
    throw i;
  };
  /** The members of an object or array up to `close`, each read by `member`, separated by commas. */
  const members = (close: string, member: () => void): void => {
    i++;
    space();
    if (text[i] === close) return void i++;
    for (;;) {
      member();
      space();
      if (text[i] === ',') i++;
      else if (text[i] === close) return void i++;
      else fail();
    }
  };
  const property = (): void => {
    space();
    if (text[i] !== '"') fail();
    string();
    space();
    if (text[i] !== ':') fail();
    i++;
    value();
  };
  const value = (): void => {
    space();
    const c = text[i];
    if (c === '{') return members('}', property);
    if (c === '[') return members(']', value);
    if (c === '"') return string();
    const literal = /^(true|false|null|-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?)/.exec(text.slice(i, i + 400));
    if (!literal) {
      // Where a misspelt word goes wrong (`flase`: at the `l`), as V8's reason names that character.
      const word = ['true', 'false', 'null'].find((candidate) => candidate[0] === c);
      if (word) for (let k = 0; k < word.length && text[i] === word[k]; k++) i++;
      fail();
    }
    i += literal![0].length;
  };
  const string = (): void => {
    for (i++; i < text.length; i++) {
      const c = text[i]!;
      if (c === '"') return void i++;
      if (c < ' ') fail();
      if (c === '\\') {
        i++;
        if (text[i] === 'u' ? !/^[0-9a-fA-F]{4}$/.test(text.slice(i + 1, i + 5)) : !'"\\/bfnrt'.includes(text[i] ?? 'x')) fail();
        if (text[i] === 'u') i += 4;
      }
    }
    fail();
  };
  try {
    value();
    space();
    return i < text.length ? i : null;
  } catch (offset) {
    return offset as number;
  }
}

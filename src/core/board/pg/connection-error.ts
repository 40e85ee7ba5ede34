import { AutoteamError } from '../../errors.js';
import { describeUrl } from './url.js';

/**
 * What the URL itself gets wrong, which no wait mends: a database, user or password the server
 * refuses (SQLSTATE 3D000, class 28). A refused connection, a timeout or a host name that does not
 * resolve yet may be a server, a network or a name not up yet: retried, and exit 1.
 */
const MISCONFIGURED = (code: string | undefined) => code === '3D000' || code?.startsWith('28') === true;

/** How long a connection may take to be made and answered before it counts as failed (the pool's connectionTimeoutMillis). */
export const CONNECT_TIMEOUT_MS = 10_000;

/** The driver's words for a connection nothing answered on in time: a port that is no PostgreSQL server, or a silent host. */
const CONNECT_TIMEOUT = /due to connection timeout|timeout exceeded when trying to connect/i;

/** A connection the server accepted but never answered on within the pool's connectionTimeoutMillis. */
export function isConnectTimeout(error: unknown): boolean {
  return CONNECT_TIMEOUT.test((error as { message?: string }).message ?? '');
}

/** A board database that cannot be reached or used: one line, the URL without its password. */
export class BoardConnectionError extends AutoteamError {
  /** The URL names what is not there (a database, a user) or a password refused: a configuration error, exit 2. */
  readonly misconfigured: boolean;

  constructor(url: string, error: unknown) {
    const e = error as { code?: string; message?: string };
    const silent = isConnectTimeout(error) ? ` (nothing answered within ${CONNECT_TIMEOUT_MS / 1000} s: is a PostgreSQL server listening there?)` : '';
    super(`cannot use the board at ${describeUrl(url)}: ${(e.message ?? String(error)).split('\n')[0]}${e.code && !(e.message ?? '').includes(e.code) ? ` (${e.code})` : ''}${silent}`, 'BOARD_UNREACHABLE');
    this.misconfigured = MISCONFIGURED(e.code);
  }
}

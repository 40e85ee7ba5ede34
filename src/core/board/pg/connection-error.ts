import { AutoteamError } from '../../errors.js';
import { describeUrl } from './url.js';

/**
 * What the URL itself gets wrong, which no wait mends: a database, user or password the server
 * refuses (SQLSTATE 3D000, class 28). A refused connection, a timeout or a host name that does not
 * resolve yet may be a server, a network or a name not up yet: retried, and exit 1.
 */
const MISCONFIGURED = (code: string | undefined) => code === '3D000' || code?.startsWith('28') === true;

/** A board database that cannot be reached or used: one line, the URL without its password. */
export class BoardConnectionError extends AutoteamError {
  /** The URL names what is not there (a database, a user) or a password refused: a configuration error, exit 2. */
  readonly misconfigured: boolean;

  constructor(url: string, error: unknown) {
    const e = error as { code?: string; message?: string };
    super(`cannot use the board at ${describeUrl(url)}: ${(e.message ?? String(error)).split('\n')[0]}${e.code && !(e.message ?? '').includes(e.code) ? ` (${e.code})` : ''}`, 'BOARD_UNREACHABLE');
    this.misconfigured = MISCONFIGURED(e.code);
  }
}

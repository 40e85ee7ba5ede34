import pg from 'pg';
import { BoardConnectionError, CONNECT_TIMEOUT_MS, isConnectTimeout } from './connection-error.js';

export { describeUrl, isPostgresUrl } from './url.js';
export { BoardConnectionError, isConnectTimeout };

/**
 * Errors that mean the connection, not the statement, failed: worth retrying on a fresh connection.
 * 53300: the server has as many connections as it allows (another process's pool gives some back).
 */
const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ENOTFOUND', 'EAI_AGAIN', '57P01', '57P02', '57P03', '08000', '08003', '08006', '08001', '08004', '53300']);

export function isConnectionError(error: unknown): boolean {
  // Already the verdict on a connection (retried, or not worth it): not asked again.
  if (error instanceof BoardConnectionError) return false;
  const e = error as { code?: string; message?: string };
  return (e.code !== undefined && CONNECTION_CODES.has(e.code)) || /Connection terminated|connection error|Client has encountered a connection error/i.test(e.message ?? '');
}

export function createPool(url: string, max = 10): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    max,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    idleTimeoutMillis: 30_000,
    // The board's statements are written for READ COMMITTED (claims that skip locked rows, a post's
    // check that must see what committed while it waited for a lock), whatever the database's default:
    // under SERIALIZABLE a team's joins failed with serialization errors. Set before the pool hands
    // the connection out (pg-pool awaits what this returns).
    onConnect: (client) => client.query('SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL READ COMMITTED'),
  });
  // An idle client whose server went away must not crash the process: the next query reconnects.
  pool.on('error', () => undefined);
  // Nor a checked-out one (a transaction, or a held advisory lock, between two statements): the pool
  // listens only to idle clients. Its next query fails and is retried; released, it is discarded.
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}

/**
 * Runs `work` with retries when the connection (not the statement) failed: a restarted server or a
 * dropped link costs a retry, not a crash. After the last attempt, a BoardConnectionError.
 */
export async function withConnectionRetry<T>(url: string, work: () => Promise<T>, attempts = 4): Promise<T> {
  let delay = 100;
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (!isConnectionError(error)) throw error;
      if (attempt >= attempts) throw new BoardConnectionError(url, error);
      await new Promise((resolve) => setTimeout(resolve, delay));
      delay *= 3;
    }
  }
}

/** Runs `work` in one transaction on one connection of `pool` (rolled back on error), retried as a whole when the connection fails. */
export function transaction<T>(url: string, pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  return withConnectionRetry(url, async () => {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  });
}

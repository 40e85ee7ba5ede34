/**
 * A real PostgreSQL server for the test files: a fresh database per case. The server is the one the
 * `postgres` project's globalSetup started for the whole run (tests/helpers/postgres-setup.ts); a
 * file outside that project starts its own (initdb + pg_ctl into a temp folder, a free port on
 * 127.0.0.1), stopped and removed after it. Without PostgreSQL binaries the cases are skipped and
 * one line says so.
 */
import { randomInt } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, inject } from 'vitest';
import { findPostgresBin, type PostgresServer, startPostgres } from '../../src/bench/postgres-server.js';

export const postgresBin = findPostgresBin();
if (!postgresBin) {
  console.warn('postgres: no PostgreSQL binaries (pg_ctl, initdb) on PATH or in /usr/lib/postgresql/*/bin — the PostgreSQL board cases are SKIPPED');
}

let url: string | null = null;
let own: PostgresServer | null = null;
let databases = 0;
/** Database names stay unique when another file (another process) creates its own on the same server. */
const run = randomInt(1_000_000);

/** Makes the server available to this file's cases (call at the top level of a test file). */
export function usePostgres(): void {
  if (!postgresBin) return;
  const shared = inject('postgresUrl');
  if (shared) {
    url = shared;
    return;
  }
  beforeAll(async () => {
    own = await startPostgres(postgresBin);
    url = own.url;
  });
  afterAll(() => {
    own?.stop();
    own = null;
    url = null;
  });
}

/** A new, empty database on the running server; its URL. */
export async function freshDatabase(): Promise<string> {
  if (!url) throw new Error('usePostgres() was not called, or PostgreSQL is missing');
  const name = `board_${process.pid}_${run}${++databases}`;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query(`CREATE DATABASE ${name}`);
  await client.end();
  return url.replace(/\/postgres$/, `/${name}`);
}

export function serverUrl(): string {
  if (!url) throw new Error('PostgreSQL is not running');
  return url;
}

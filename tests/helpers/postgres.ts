/**
 * A real PostgreSQL server for a test file: started once (initdb + pg_ctl into a temp folder, a free
 * port on 127.0.0.1), a fresh database per case, stopped and removed after. Without PostgreSQL
 * binaries the cases are skipped and one line says so.
 */
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { findPostgresBin, type PostgresServer, startPostgres } from '../../src/bench/postgres-server.js';

export const postgresBin = findPostgresBin();
if (!postgresBin) {
  console.warn('postgres: no PostgreSQL binaries (pg_ctl, initdb) on PATH or in /usr/lib/postgresql/*/bin — the PostgreSQL board cases are SKIPPED');
}

let server: PostgresServer | null = null;
let databases = 0;

/** Starts the server for this file (call at the top level of a test file). */
export function usePostgres(): void {
  if (!postgresBin) return;
  beforeAll(async () => {
    server = await startPostgres(postgresBin);
  }, 60_000);
  afterAll(() => {
    server?.stop();
    server = null;
  });
}

/** A new, empty database on the running server; its URL. */
export async function freshDatabase(): Promise<string> {
  if (!server) throw new Error('usePostgres() was not called, or PostgreSQL is missing');
  const name = `board_${process.pid}_${++databases}`;
  const client = new pg.Client({ connectionString: server.url });
  await client.connect();
  await client.query(`CREATE DATABASE ${name}`);
  await client.end();
  return server.url.replace(/\/postgres$/, `/${name}`);
}

export function serverUrl(): string {
  if (!server) throw new Error('PostgreSQL is not running');
  return server.url;
}

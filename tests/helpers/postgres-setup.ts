/**
 * The vitest globalSetup of the `postgres` project: one PostgreSQL server for every test file that
 * uses it (each case gets a fresh database on it, tests/helpers/postgres.ts), instead of an initdb and
 * a start per file. Its URL reaches the test files through `inject('postgresUrl')`; null when there
 * are no PostgreSQL binaries (the cases are skipped).
 */
import type { TestProject } from 'vitest/node';
import { findPostgresBin, startPostgres } from '../../src/bench/postgres-server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    postgresUrl: string | null;
  }
}

export default async function setup(project: TestProject): Promise<() => void> {
  const bin = findPostgresBin();
  if (!bin) {
    project.provide('postgresUrl', null);
    return () => undefined;
  }
  const server = await startPostgres(bin);
  project.provide('postgresUrl', server.url);
  return () => server.stop();
}

/**
 * The server ends a connection the board holds between two statements (a pipeline's advisory lock,
 * a transaction): the process must not crash on the client's 'error' event, and the board goes on.
 * Run in a child process, so that a crash is an exit code, not a lost test runner.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { HANG_MS } from '../helpers/agent-wait.js';
import { freshDatabase, postgresBin, usePostgres } from '../helpers/postgres.js';

usePostgres();
const dist = path.resolve(import.meta.dirname, '..', '..', 'dist', 'core', 'board', 'board.js');

const SCRIPT = `
import pg from 'pg';
const { openBoard } = await import(process.env.BOARD_MODULE);
const [url, dir] = process.argv.slice(1);
const board = await openBoard(url, dir);
const admin = new pg.Client({ connectionString: url });
await admin.connect();
await board.tasks.withLock('held', async () => {
  const { rows } = await admin.query("SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()");
  const ended = rows.map((row) => row.pid);
  await admin.query('SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid', [ended]);
  // Until every backend ended here is gone: the held connection has been told by then. (Not "until no
  // other backend is left": the board's listener connects again 100 ms after losing its connection.)
  const left = 'SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid = ANY($1::int[])';
  while ((await admin.query(left, [ended])).rows[0].n > 0) await new Promise((resolve) => setImmediate(resolve));
});
const task = await board.tasks.create({ subject: 'after the connections were ended' });
console.log('created #' + task.id);
await admin.end();
await board.close();
`;

describe.runIf(postgresBin)('a connection the server ends while the board holds it', () => {
  it('does not crash the process, and the next write goes through', async () => {
    const url = await freshDatabase();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-pgloss-'));
    try {
      const run = spawnSync(process.execPath, ['--input-type=module', '-e', SCRIPT, url, dir], {
        cwd: path.resolve(import.meta.dirname, '..', '..'),
        env: { ...process.env, BOARD_MODULE: pathToFileURL(dist).href },
        encoding: 'utf8',
        timeout: HANG_MS,
      });
      expect(run.stderr).not.toMatch(/Unhandled 'error' event|terminating connection/);
      expect(run.status, run.stdout + run.stderr).toBe(0);
      expect(run.stdout.trim()).toBe('created #1');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** A board closed while its listener (re)connects: the connection it was making must not outlive it. */
const CLOSE_WHILE_CONNECTING = `
const { PgListener } = await import(process.env.LISTENER_MODULE);
const listener = new PgListener(process.argv[1]);
const started = listener.start();
await listener.close();
await started;
console.log('closed');
`;

describe.runIf(postgresBin)('a listener closed while it connects', () => {
  it('ends the connection it was making, so the process exits by itself', async () => {
    const url = await freshDatabase();
    const listener = path.resolve(import.meta.dirname, '..', '..', 'dist', 'core', 'board', 'pg', 'listener.js');
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', CLOSE_WHILE_CONNECTING, url], {
      env: { ...process.env, LISTENER_MODULE: pathToFileURL(listener).href },
      encoding: 'utf8',
      timeout: HANG_MS,
    });
    // Killed at HANG_MS (status null) when the connection kept the process alive.
    expect(run.status, run.stdout + run.stderr).toBe(0);
    expect(run.stdout.trim()).toBe('closed');
  });
});

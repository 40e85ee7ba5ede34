/**
 * A board whose LISTEN connection the server ended (a restart, a dropped link) tells its process to
 * read every member's inbox once it listens again: mail sent meanwhile was told to nobody, and a
 * teammate's host reads an inbox only on news or after its poll.
 */
import fs from 'node:fs';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { openBoard } from '../../src/core/board/board.js';
import { until } from '../helpers/agent-wait.js';
import { tempRoot } from '../helpers/board-spawn.js';
import { freshDatabase, postgresBin, usePostgres } from '../helpers/postgres.js';

usePostgres();
const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

describe.runIf(postgresBin)('a board whose listener connects again', () => {
  it("tells every member's inbox, the lead's too, once it listens again", async () => {
    const url = await freshDatabase();
    const root = tempRoot('autoteam-pg-relisten-');
    closers.push(async () => fs.rmSync(root, { recursive: true, force: true }));
    const board = await openBoard(url, root);
    closers.push(() => board.close());
    await board.registry.join('eng', 'engineer');
    await board.registry.join('rev', 'reviewer');
    const told: string[] = [];
    const events = board.events();
    events.on('inbox', (name: string) => told.push(name));
    await events.start();
    closers.push(() => events.close());

    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    closers.push(() => admin.end());
    const listener = "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query = 'LISTEN autoteam'";
    const [before] = (await admin.query<{ pid: number }>(listener)).rows;
    expect(before).toBeDefined();
    await admin.query('SELECT pg_terminate_backend($1)', [before!.pid]);
    const lead = board.registry.read().lead;
    await until(() => ['eng', 'rev', lead].every((name) => told.includes(name)), 'every inbox told after the listener connected again');
    // Nothing else was told: no mail was sent, and nobody else is on the team.
    expect([...new Set(told)].sort()).toEqual(['eng', lead, 'rev'].sort());
  });
});

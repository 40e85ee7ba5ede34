/**
 * The PostgreSQL board's one-statement writes. A task's (PgTaskBoard.mutate): stamped by the
 * database's clock as the process reckons it, held to the database's own, never going back in a task,
 * and made once when the reply to it is lost. A document's (PgDocStore.change): made on the replica's
 * copy, and decided again on the document when that copy moved, so no change is lost; its
 * notification carries the document.
 */
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import type { DbClock } from '../../src/core/board/pg/db-clock.js';
import { createPool } from '../../src/core/board/pg/connection.js';
import { PgDocStore } from '../../src/core/board/pg/pg-docs.js';
import { PgTaskBoard } from '../../src/core/board/pg/pg-task-board.js';
import { TeamRegistry } from '../../src/core/board/team-registry.js';
import { migrateWith } from '../../src/core/board/pg/schema.js';
import { UPDATE_IF_UNCHANGED } from '../../src/core/board/pg/task-sql.js';
import { until } from '../helpers/agent-wait.js';
import { freshDatabase, postgresBin, usePostgres } from '../helpers/postgres.js';

usePostgres();
const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** A board on `pool` (closed after the test), its replica loaded. */
async function boardOn(url: string, pool: pg.Pool): Promise<PgTaskBoard> {
  closers.push(() => pool.end());
  await migrateWith(url, pool);
  const board = new PgTaskBoard(url, pool);
  await board.refresh();
  return board;
}

/** A reading of the database's clock `aheadMs` off, as a host whose clock stepped would take. */
function misread(board: PgTaskBoard, aheadMs: number): void {
  (board as unknown as { clock: DbClock }).clock.read(new Date(Date.now() + aheadMs), Date.now());
}

async function databaseNow(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<{ now: Date }>('SELECT clock_timestamp() AS now')).rows[0]!.now.getTime();
  } finally {
    await client.end();
  }
}

describe.runIf(postgresBin)('a task written in one statement on the PostgreSQL board', () => {
  it('is stamped by the database clock when the reckoning of it is more than a second off, and its stamps never go back', async () => {
    const url = await freshDatabase();
    const board = await boardOn(url, createPool(url, 2));
    const task = await board.create({ subject: 'stamped' });
    expect(await board.claim(task.id, 'alice')).toMatchObject({ ok: true });
    const fence = { owner: 'alice', token: 1 };

    misread(board, 60_000);
    const before = await databaseNow(url);
    await board.update(task.id, { artifacts: { summary: 'one' } }, { fence, event: 'noted' });
    const after = await databaseNow(url);
    const noted = Date.parse((await board.get(task.id)).updatedAt);
    // Not a minute ahead: decided again on the locked row, by the database's clock.
    expect(noted).toBeGreaterThanOrEqual(before - 5);
    expect(noted).toBeLessThanOrEqual(after + 5);

    // Ahead, but within the second the statement allows: it lands so stamped…
    misread(board, 800);
    await board.update(task.id, { artifacts: { summary: 'two' } }, { fence, event: 'noted' });
    const ahead = Date.parse((await board.get(task.id)).updatedAt);
    expect(ahead).toBeGreaterThan(after + 400);
    // …and a later write by a clock read right is stamped no earlier.
    misread(board, 0);
    await board.complete(task.id, fence, 'done');
    const history = (await board.get(task.id)).history;
    expect(history.map((entry) => entry.event)).toEqual(['created', 'claimed', 'noted', 'noted', 'completed']);
    const stamps = history.map((entry) => Date.parse(entry.at));
    expect(stamps).toEqual([...stamps].sort((a, b) => a - b));
    expect(stamps.at(-1)).toBeGreaterThanOrEqual(ahead);
  });

  it('is made once when the reply to it is lost with the connection after it landed', async () => {
    const url = await freshDatabase();
    const pool = createPool(url, 2);
    let lost = 0;
    // The connection drops as the reply to the first one-statement write comes back: it has landed.
    const dropping = new Proxy(pool, {
      get(target, property) {
        if (property !== 'query') return Reflect.get(target, property, target);
        return async (...args: Parameters<pg.Pool['query']>) => {
          const result = await (target.query as (...a: unknown[]) => Promise<unknown>)(...args);
          if (args[0] === UPDATE_IF_UNCHANGED && lost++ === 0) throw new Error('Connection terminated unexpectedly');
          return result;
        };
      },
    });
    const board = await boardOn(url, dropping);
    const task = await board.create({ subject: 'once' });
    expect(await board.claim(task.id, 'alice')).toMatchObject({ ok: true });
    const noted = await board.update(task.id, { artifacts: { summary: 'noted once' } }, { fence: { owner: 'alice', token: 1 }, event: 'noted' });
    expect(lost).toBe(1);
    expect(noted).toMatchObject({ ok: true, task: { artifacts: { summary: 'noted once' } } });
    expect((await board.get(task.id)).history.map((entry) => entry.event)).toEqual(['created', 'claimed', 'noted']);
    expect(await board.complete(task.id, { owner: 'alice', token: 1 }, 'done')).toMatchObject({ ok: true, task: { status: 'completed' } });
  });
});

/** A registry on its own pool and document replica, as a process of the team holds it. */
async function registryOn(url: string): Promise<{ registry: TeamRegistry; docs: PgDocStore }> {
  const pool = createPool(url, 2);
  closers.push(() => pool.end());
  await migrateWith(url, pool);
  const docs = new PgDocStore(url, pool);
  await docs.refresh();
  return { registry: new TeamRegistry('/nonexistent', { docs }), docs };
}

describe.runIf(postgresBin)('a document written in one statement on the PostgreSQL board', () => {
  it("from a copy that another process's change has moved, is decided on the document as it is: no change lost", async () => {
    const url = await freshDatabase();
    const here = await registryOn(url);
    await here.registry.ensure('crew');
    await here.registry.join('eng', 'engineer');
    await here.registry.join('rev', 'reviewer');
    const there = await registryOn(url);
    // Each from a copy of the same version: the second statement finds the document moved.
    await here.registry.setStatus('eng', 'working', { task: 1 });
    await there.registry.setStatus('rev', 'working', { task: 2 });
    await here.docs.refresh();
    expect(here.registry.read().members.map((m) => [m.name, m.status, m.task])).toEqual([
      ['eng', 'working', 1],
      ['rev', 'working', 2],
    ]);
    // A member its copy does not hold yet (joined elsewhere after its last read): found on the document.
    await here.registry.join('ana', 'analyst');
    await there.registry.setStatus('ana', 'working', { task: 3 });
    await here.docs.refresh();
    expect(here.registry.get('ana')).toMatchObject({ status: 'working', task: 3 });
  });

  it('is heard with the document itself when it fits, by its key when it is larger or deleted; a heartbeat is not heard', async () => {
    const url = await freshDatabase();
    const { registry, docs } = await registryOn(url);
    await registry.ensure('crew');
    await registry.join('eng', 'engineer');
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    closers.push(() => client.end());
    const heard: string[] = [];
    client.on('notification', (message) => heard.push(message.payload ?? ''));
    await client.query('LISTEN autoteam');
    await registry.heartbeat('eng');
    await registry.setStatus('eng', 'working', { task: 4 });
    await docs.change('big', () => ({ write: { text: 'x'.repeat(8_000) }, result: null }));
    await docs.change('big', () => ({ write: null, result: null }));
    await until(() => heard.length >= 3, 'three notifications');
    const [status, big, deleted] = heard;
    const { rows } = await client.query<{ doc: unknown; version: string }>("SELECT doc, version FROM autoteam_docs WHERE key = 'config'");
    expect(JSON.parse(status!.slice('docrow:'.length))).toEqual({ key: 'config', version: Number(rows[0]!.version), doc: rows[0]!.doc });
    expect([big, deleted]).toEqual(['doc:big', 'doc:big']);
    expect(heard).toHaveLength(3);
  });

  it("taken from a notification by another process's replica, with no read of it", async () => {
    const url = await freshDatabase();
    const { registry } = await registryOn(url);
    await registry.ensure('crew');
    await registry.join('eng', 'engineer');
    const listening = await registryOn(url);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    closers.push(() => client.end());
    client.on('notification', (message) => {
      const payload = message.payload ?? '';
      if (payload.startsWith('docrow:')) listening.docs.heard(JSON.parse(payload.slice('docrow:'.length)));
    });
    await client.query('LISTEN autoteam');
    await registry.setStatus('eng', 'waiting', { task: 5, reason: 'an answer' });
    await until(() => listening.registry.read().members[0]?.status === 'waiting', 'the status heard');
    expect(listening.registry.get('eng')).toEqual(registry.get('eng'));
    // An older version heard late never puts the document back.
    const stale = { key: 'config', version: 1, doc: { team: 'old', members: [] } };
    listening.docs.heard(stale);
    expect(listening.registry.read().team).toBe('crew');
  });
});


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
import { MIGRATIONS, migrateWith, SCHEMA_VERSION } from '../../src/core/board/pg/schema.js';
import { POST_AFTER, rowObject, UPDATE_IF_UNCHANGED } from '../../src/core/board/pg/task-sql.js';
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
async function registryOn(url: string, now?: () => Date): Promise<{ registry: TeamRegistry; docs: PgDocStore }> {
  const pool = createPool(url, 2);
  closers.push(() => pool.end());
  await migrateWith(url, pool);
  const docs = new PgDocStore(url, pool);
  await docs.refresh();
  return { registry: new TeamRegistry('/nonexistent', { docs, ...(now ? { now } : {}) }), docs };
}

/** Two processes' registries on one fresh database; `eng` and `rev` joined by the first. */
async function crewOfTwo(): Promise<{ here: Awaited<ReturnType<typeof registryOn>>; there: Awaited<ReturnType<typeof registryOn>> }> {
  const url = await freshDatabase();
  const here = await registryOn(url);
  await here.registry.ensure('crew');
  await here.registry.join('eng', 'engineer');
  await here.registry.join('rev', 'reviewer');
  return { here, there: await registryOn(url) };
}

describe.runIf(postgresBin)('a document written in one statement on the PostgreSQL board', () => {
  it("from a copy that another process's change has moved, is decided on the document as it is: no change lost", async () => {
    const { here, there } = await crewOfTwo();
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

  it('from a copy that moved, is read again and written in one statement, not in a transaction holding its lock', async () => {
    const { here, there } = await crewOfTwo();
    await there.registry.setStatus('rev', 'working', { task: 2 });
    // What `here`'s pool is asked from now on (a transaction goes through a client of its own instead).
    const asked: string[] = [];
    const pool = (here.docs as unknown as { pool: pg.Pool }).pool;
    const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
    pool.query = ((...args: unknown[]) => (asked.push(String(args[0])), query(...args))) as typeof pool.query;
    await here.registry.setStatus('eng', 'working', { task: 1 });
    expect(asked.filter((text) => text.includes('UPDATE autoteam_docs'))).toHaveLength(2);
    expect(asked.some((text) => text.startsWith('SELECT key, doc, version FROM autoteam_docs'))).toBe(true);
    await there.docs.refresh();
    expect(there.registry.read().members.map((m) => [m.name, m.status, m.task])).toEqual([
      ['eng', 'working', 1],
      ['rev', 'working', 2],
    ]);
  });

  it("waits for a change under the document's lock, which reads without a row lock: the change made there is not written over", async () => {
    const url = await freshDatabase();
    const { registry } = await registryOn(url);
    await registry.ensure('crew');
    await registry.join('eng', 'engineer');
    // Another process's change under the lock, as PgDocStore.change's transaction makes it: read, then write what it read and changed.
    const other = new pg.Client({ connectionString: url });
    await other.connect();
    closers.push(() => other.end());
    await other.query('BEGIN');
    await other.query("SELECT pg_advisory_xact_lock(hashtext('autoteam_doc:config'))");
    const read = (await other.query<{ doc: { team: string } }>("SELECT doc FROM autoteam_docs WHERE key = 'config'")).rows[0]!.doc;
    const setting = registry.setStatus('eng', 'working', { task: 9 });
    const watcher = new pg.Client({ connectionString: url });
    await watcher.connect();
    closers.push(() => watcher.end());
    // Until the status write waits for the lock (asked every 10 ms; the test's timeout bounds it).
    while ((await watcher.query("SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted")).rows.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    await other.query("INSERT INTO autoteam_docs (key, doc) VALUES ('config', $1) ON CONFLICT (key) DO UPDATE SET doc = EXCLUDED.doc", [JSON.stringify({ ...read, team: 'renamed' })]);
    await other.query('COMMIT');
    await setting;
    const { rows } = await watcher.query<{ doc: { team: string; members: Array<{ name: string; status: string; task: number }> } }>("SELECT doc FROM autoteam_docs WHERE key = 'config'");
    expect(rows[0]!.doc.team).toBe('renamed');
    expect(rows[0]!.doc.members.find((m) => m.name === 'eng')).toMatchObject({ status: 'working', task: 9 });
  });

  it('tried on a copy that moved and decided again on the document, reports each member it marks dead once', async () => {
    const url = await freshDatabase();
    let clock = Date.parse('2026-06-01T00:00:00Z');
    const lead = await registryOn(url, () => new Date(clock));
    await lead.registry.ensure('crew');
    await lead.registry.join('eng', 'engineer', { pid: null });
    const other = await registryOn(url, () => new Date(clock));
    await other.registry.join('ana', 'analyst', { pid: null });
    // The lead's copy is from before the analyst joined: its one statement finds the config moved.
    clock += 60_000;
    const reaped = await lead.registry.reapDead();
    expect(reaped.map(({ member }) => member.name).sort()).toEqual(['ana', 'eng']);
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

/** A fresh database whose default isolation is `level`, and a client on it (closed after the test). */
async function databaseAt(level: string): Promise<{ url: string; admin: pg.Client }> {
  const url = await freshDatabase();
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  closers.push(() => admin.end());
  await admin.query(`ALTER DATABASE ${new URL(url).pathname.slice(1)} SET default_transaction_isolation = '${level}'`);
  return { url, admin };
}

describe.runIf(postgresBin)("a stage's next task posted in one call on the PostgreSQL board", () => {
  it("is told as posted to the call that posted it when the reply was lost and it asks again, and as another's to any other call", async () => {
    const url = await freshDatabase();
    const board = await boardOn(url, createPool(url, 2));
    const done = await board.create({ subject: 'stage one', pipeline: 2 });
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    closers.push(() => client.end());
    const draft = rowObject({ ...done, subject: 'stage two', artifacts: { from: done.id } });
    const post = async (call: string) => (await client.query<{ posted: { created: boolean; row: { id: number } } }>(POST_AFTER, [2, done.id, JSON.stringify(draft), call])).rows[0]!.posted;
    const first = await post('call-1');
    expect(first.created).toBe(true);
    // The same call again (its reply lost): its own post, not a second one.
    expect(await post('call-1')).toMatchObject({ created: true, row: { id: first.row.id } });
    expect(await post('call-2')).toMatchObject({ created: false, row: { id: first.row.id } });
  });

  it('on a database whose default isolation is SERIALIZABLE, runs at READ COMMITTED all the same: a team joins from two processes at once', async () => {
    const { url, admin } = await databaseAt('serializable');
    const first = await registryOn(url);
    await first.registry.ensure('crew');
    const second = await registryOn(url);
    // Joins at once from two processes: under SERIALIZABLE one failed with a serialization error.
    await Promise.all(['a', 'b', 'c', 'd'].map((name, i) => (i % 2 ? first : second).registry.join(name, 'engineer', { pid: null })));
    await first.docs.refresh();
    expect(first.registry.names().sort()).toEqual(['a', 'b', 'c', 'd', 'lead']);
    // A call made at another level (a pooler that drops session settings) is refused, and the post goes the locked way.
    await admin.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
    await expect(admin.query(POST_AFTER, [1, 1, JSON.stringify({}), 'call'])).rejects.toMatchObject({ code: 'AT001' });
    await admin.query('ROLLBACK');
  });

  it('on a database whose default isolation is REPEATABLE READ (where the check could not see a post made while it waited), posts once', async () => {
    const { url, admin } = await databaseAt('repeatable read');
    const here = await boardOn(url, createPool(url, 3));
    const there = await boardOn(url, createPool(url, 3));
    const done = await here.create({ subject: 'stage one', pipeline: 4 });
    await there.refresh();
    const next = { subject: 'stage two', pipeline: 4, artifacts: { from: done.id } };
    const results = await Promise.all([here, there, here, there].map((board) => board.createAfter(next, { pipeline: 4, task: done.id })));
    expect(results.filter((result) => result.created)).toHaveLength(1);
    expect(new Set(results.map((result) => result.task.id)).size).toBe(1);
    const { rows } = await admin.query("SELECT count(*)::int AS n FROM autoteam_tasks WHERE artifacts->>'from' = $1", [String(done.id)]);
    expect(rows[0]!.n).toBe(1);
  });
});

describe.runIf(postgresBin)('a board made by an older autoteam', () => {
  it('at schema version 4, with a pipeline under way, is migrated on open and posts its next task once', async () => {
    const url = await freshDatabase();
    const old = new pg.Client({ connectionString: url });
    await old.connect();
    closers.push(() => old.end());
    await old.query('BEGIN');
    await old.query('CREATE TABLE autoteam_schema (version integer NOT NULL)');
    for (const migration of MIGRATIONS.slice(0, 4)) await old.query(migration);
    await old.query('INSERT INTO autoteam_schema (version) VALUES (4)');
    await old.query(
      `INSERT INTO autoteam_tasks (subject, status, pipeline, stage, history) VALUES ('stage one', 'completed', 9, 'requirements', '[{"at":"2026-01-01T00:00:00.000Z","by":"lead","event":"created","detail":"stage one"}]')`,
    );
    await old.query('COMMIT');
    const board = await boardOn(url, createPool(url, 2));
    expect((await old.query<{ version: number }>('SELECT version FROM autoteam_schema')).rows[0]!.version).toBe(SCHEMA_VERSION);
    const [done] = board.list();
    const next = { subject: 'stage two', pipeline: 9, artifacts: { from: done!.id } };
    const first = await board.createAfter(next, { pipeline: 9, task: done!.id });
    const again = await board.createAfter(next, { pipeline: 9, task: done!.id });
    expect([first.created, again.created]).toEqual([true, false]);
    expect(again.task.id).toBe(first.task.id);
  });
});


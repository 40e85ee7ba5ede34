/**
 * A teammate thread's PostgreSQL board follows its process's: it opens no LISTEN connection and runs
 * no poll, and its replicas take what the process's board read (ReplicaFeed), versions deciding. It
 * is opened with the teammates' settings, as a file board is.
 */
import fs from 'node:fs';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import path from 'node:path';
import { TeammateManager } from '../../src/core/agent/manager.js';
import { openBoard } from '../../src/core/board/board.js';
import { createPool, withConnectionRetry } from '../../src/core/board/pg/connection.js';
import type { Board, ReplicaRead } from '../../src/core/board/board-types.js';
import { HANG_MS, until } from '../helpers/agent-wait.js';
import { tempRoot } from '../helpers/board-spawn.js';
import { freshDatabase, postgresBin, usePostgres } from '../helpers/postgres.js';

usePostgres();
const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function open(url: string, follow = false): Promise<Board> {
  // A local folder of its own: without one, the URL would be taken for a folder in the working directory.
  const root = tempRoot('autoteam-pg-follow-');
  closers.push(async () => fs.rmSync(root, { recursive: true, force: true }));
  const board = await openBoard(url, root, follow ? { follow: true } : {});
  closers.push(() => board.close());
  return board;
}

async function listening(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: string }>("SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND query = 'LISTEN autoteam'");
    return Number(rows[0]!.n);
  } finally {
    await client.end();
  }
}

describe.runIf(postgresBin)('a board that follows its process’s board', () => {
  it('neither listens nor reads for itself; it takes each read of the board it follows', async () => {
    const url = await freshDatabase();
    const parent = await open(url);
    const elsewhere = await open(url);
    await parent.registry.ensure('crew');
    const follower = await open(url, true);
    expect(await listening(url)).toBe(2);

    // Not handed anything: another host's post reaches the process's board and never the follower.
    const first = await elsewhere.tasks.create({ subject: 'first' });
    await until(() => parent.tasks.list().some((task) => task.id === first.id) || undefined, 'the process’s board to read the post');
    expect(follower.tasks.list().map((task) => task.id)).toEqual([]);

    // Handed each read (cloned, as a thread's message is): tasks and documents arrive by the process's reads alone.
    const reads: ReplicaRead[] = [];
    const off = parent.replica!.onRead((read) => {
      reads.push(structuredClone(read));
      follower.replica!.take(structuredClone(read));
    });
    closers.push(async () => off());
    await elsewhere.tasks.update(first.id, { subject: 'first, edited' });
    await until(() => follower.tasks.list().find((task) => task.id === first.id)?.subject === 'first, edited' || undefined, 'the follower to take the edit');
    await elsewhere.registry.join('eng', 'engineer');
    await until(() => follower.registry.names().includes('eng') || undefined, 'the follower to take the join');

    // Its own write is newer than anything read before it: a late read does not put the old row back.
    const stale = reads.find((read) => read.tasks?.rows.length)!;
    await follower.tasks.update(first.id, { subject: 'the follower’s own' });
    follower.replica!.take(stale);
    expect(follower.tasks.get(first.id).subject).toBe('the follower’s own');

    // A document deleted: the follower drops it, unless it holds a newer version than the one deleted.
    const lease = parent.lease({ heartbeatMs: 60_000 });
    await lease.acquire();
    await until(() => follower.docs.keys('lead').length === 1 || undefined, 'the follower to take the lease');
    await lease.release();
    await until(() => follower.docs.keys('lead').length === 0 || undefined, 'the follower to drop the released lease');
    follower.replica!.take({ docs: { rows: [], gone: [{ key: 'config', upTo: 0 }] } });
    expect(follower.registry.names()).toContain('eng');
    expect(await listening(url)).toBe(2);
  });
});

describe.runIf(postgresBin)("a teammate thread's board on PostgreSQL", () => {
  it("claims with the teammates' lease length (settings.leaseMs), not the default 30 s", async () => {
    const url = await freshDatabase();
    const board = await open(url);
    await board.registry.ensure('crew');
    const watcher = board.events();
    await watcher.start();
    closers.push(() => watcher.close());
    const manager = new TeammateManager({ rootDir: board.rootDir, board, watcher, model: { kind: 'offline', reason: 'test' }, settings: { leaseMs: 3_000, pollMs: 3_600_000, idleTimeoutMs: 0 } });
    closers.push(() => manager.close(2_000));
    manager.spawn('eng', 'engineer');
    // Held in its command until the test writes GO: the lease is renewed, by its length, meanwhile.
    const task = await board.tasks.create({ subject: 'Held', description: 'Run `until [ -f GO ]; do sleep 0.05; done; echo done > OUT.txt`.', role: 'engineer' });
    const claimed = await until(() => {
      const current = board.tasks.list().find((t) => t.id === task.id);
      return current?.status === 'in_progress' && current.lease ? current : undefined;
    }, 'the claim');
    const left = Date.parse(claimed.lease!.until) - Date.parse(claimed.history.find((entry) => entry.event === 'claimed')!.at);
    expect(left).toBeGreaterThan(2_000);
    expect(left).toBeLessThanOrEqual(3_100);
    await until(() => fs.existsSync(path.join(board.rootDir, 'workspace', 'general')) || undefined, 'the workspace made');
    fs.writeFileSync(path.join(board.rootDir, 'workspace', 'general', 'GO'), '');
    await until(() => board.tasks.list().find((t) => t.id === task.id)?.status === 'completed' || undefined, 'the task done');
  });

  it('opens its pool\'s connections ahead (warmConnections), while its teammates are idle, and keeps them', async () => {
    const url = await freshDatabase();
    const root = tempRoot('autoteam-pg-follow-');
    closers.push(async () => fs.rmSync(root, { recursive: true, force: true }));
    const board = await openBoard(url, root, { follow: true, poolSize: 5, warmConnections: 5 });
    closers.push(() => board.close());
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    closers.push(() => admin.end());
    const others = async () => (await admin.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()')).rows[0]!.n;
    // With no statement asked of it: the board's open used one, the warming the other four.
    for (const end = Date.now() + HANG_MS; (await others()) < 5; await new Promise((resolve) => setTimeout(resolve, 15))) {
      if (Date.now() > end) throw new Error(`timed out: five connections open (${await others()})`);
    }
    await board.tasks.create({ subject: 'one statement' });
    expect(await others()).toBe(5);
  });

  it('waits for a connection the server has none left for (53300), as for one it cannot reach, rather than fail', async () => {
    const url = await freshDatabase();
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    closers.push(() => admin.end());
    // A role allowed one connection (a superuser is held to no limit), owning the database.
    const role = `limited_${process.pid}_${Date.now()}`;
    await admin.query(`CREATE ROLE ${role} LOGIN CONNECTION LIMIT 1`);
    const limited = new URL(url);
    limited.username = role;
    const held = new pg.Client({ connectionString: limited.toString() });
    await held.connect();
    const pool = createPool(limited.toString(), 1);
    closers.push(() => pool.end());
    let attempts = 0;
    // The first attempt meets the limit; the held connection is let go only before the second.
    const answer = await withConnectionRetry(limited.toString(), async () => {
      if (++attempts === 2) await held.end();
      return (await pool.query<{ one: number }>('SELECT 1 AS one')).rows[0]!.one;
    });
    expect([answer, attempts]).toEqual([1, 2]);
  });
});


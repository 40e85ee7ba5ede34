/**
 * refresh() on the PostgreSQL board reads only what changed since its last read, and must miss
 * nothing whatever order writers commit in: a transaction that began before another but commits after
 * it (its row's version is the older one) is still seen.
 */
import fs from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { type Board, type OpenBoardOptions, openBoard } from '../../src/core/board/board.js';
import { type OpenedTaskStore, openTaskStore } from '../../src/core/board/open.js';
import { createPool } from '../../src/core/board/pg/connection.js';
import { PgDocStore } from '../../src/core/board/pg/pg-docs.js';
import { PgTaskBoard } from '../../src/core/board/pg/pg-task-board.js';
import { rowFromNotice, toTask } from '../../src/core/board/pg/task-sql.js';
import { TeamRegistry } from '../../src/core/board/team-registry.js';
import { until } from '../helpers/agent-wait.js';
import { tempRoot } from '../helpers/board-spawn.js';
import { freshDatabase, postgresBin, usePostgres } from '../helpers/postgres.js';

usePostgres();
const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** The board at `url`, with a local folder of its own, not the URL taken for a folder; both closed and removed after the test. */
async function open(url: string, options: OpenBoardOptions = {}): Promise<Board> {
  const root = tempRoot('autoteam-pg-refresh-');
  closers.push(async () => fs.rmSync(root, { recursive: true, force: true }));
  const board = await openBoard(url, root, options);
  closers.push(() => board.close());
  return board;
}

async function store(url: string): Promise<OpenedTaskStore> {
  const opened = await openTaskStore(url);
  closers.push(async () => opened.close?.());
  return opened;
}

describe('openBoard on a PostgreSQL URL', () => {
  it('needs a local folder, and says so before it connects, instead of making one named after the URL', async () => {
    const cwd = fs.readdirSync(process.cwd());
    await expect(openBoard('postgres://someone:secret@127.0.0.1:1/nowhere')).rejects.toThrow('a PostgreSQL board needs a local folder for its workspaces and inboxes');
    expect(fs.readdirSync(process.cwd())).toEqual(cwd);
  });
});

describe.runIf(postgresBin)('refresh() on the PostgreSQL board', () => {
  it('sees a write that commits after a later one, and reads nothing when nothing changed', async () => {
    const url = await freshDatabase();
    const writer = await store(url);
    for (let i = 1; i <= 3; i++) await writer.create({ subject: `task ${i}` });
    const reader = await store(url);
    expect((await reader.list()).map((task) => task.subject)).toEqual(['task 1', 'task 2', 'task 3']);

    // A slow writer: its transaction starts first and takes the older version…
    const slow = new pg.Client({ connectionString: url });
    await slow.connect();
    closers.push(() => slow.end());
    await slow.query('BEGIN');
    await slow.query("UPDATE autoteam_tasks SET subject = 'task 1, slow' WHERE id = 1");
    // …a fast one commits meanwhile, and the reader catches up with it.
    await writer.update(2, { subject: 'task 2, fast' });
    expect(await reader.refresh()).toBe(1);
    expect((await reader.list()).map((task) => task.subject)).toEqual(['task 1', 'task 2, fast', 'task 3']);
    // The slow one commits last: the next refresh still reads it.
    await slow.query('COMMIT');
    expect(await reader.refresh()).toBe(1);
    expect((await reader.list()).map((task) => task.subject)).toEqual(['task 1, slow', 'task 2, fast', 'task 3']);
    // Nothing changed: nothing read into the replica.
    expect(await reader.refresh()).toBe(0);
  });

  it("wakes a watcher for a task change, not for another member's heartbeat (the registry is refreshed all the same)", async () => {
    const url = await freshDatabase();
    const beating = await open(url);
    const watching = await open(url);
    await beating.registry.ensure('crew');
    await beating.registry.join('engineer', 'engineer');
    const events = watching.events();
    closers.push(() => events.close());
    await events.start();
    let wakes = 0;
    events.on('board', () => wakes++);
    const seen = (since: string) => watching.registry.read().members.find((member) => member.name === 'engineer')?.heartbeat !== since;
    const before = watching.registry.read().members.find((member) => member.name === 'engineer')?.heartbeat ?? '';
    // Heartbeats: the watcher's copy of the registry follows them, and nobody is woken.
    for (let i = 0; i < 3; i++) await beating.registry.heartbeat('engineer');
    await until(() => seen(before), 'the watcher to read the heartbeat');
    expect(wakes).toBe(0);
    // A task wakes it.
    await beating.tasks.create({ subject: 'a task' });
    await until(() => wakes > 0, 'the watcher to wake for the task');
    // So does a change its replica holds already (its own write, when the notification comes back
    // after the write's own answer): the teammates of its process are woken for it too.
    const own = await watching.tasks.create({ subject: 'its own task' });
    await until(() => wakes > 1, 'the watcher to wake for its own task');
    const before2 = wakes;
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    closers.push(() => client.end());
    await client.query("SELECT pg_notify('autoteam', 'row:' || row_to_json(t)::text) FROM autoteam_tasks t WHERE id = $1", [own.id]);
    await until(() => wakes > before2, 'the watcher to wake for a row it held');
  });

  it("carries a task's row in its change's notification when it fits, as the board holds it, and a larger one's id (bytes, not characters)", async () => {
    const url = await freshDatabase();
    const board = await open(url);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    closers.push(() => client.end());
    const notices: string[] = [];
    client.on('notification', (notice) => {
      if (/^(row|task):/.test(notice.payload ?? '')) notices.push(notice.payload!);
    });
    await client.query('LISTEN autoteam');
    const task = await board.tasks.create({ subject: 'small', artifacts: { summary: 'grün' } });
    // 3,950 characters, 7,900 bytes: with the rest of the row, over what a notification holds in bytes, not in characters.
    await board.tasks.update(task.id, { artifacts: { requirement: 'ü'.repeat(3_950) } }, { by: 'lead', event: 'grew' });
    await until(() => notices.length >= 2, 'both notifications');
    expect(notices[0]!.startsWith('row:')).toBe(true);
    expect(isDeepStrictEqual(toTask(rowFromNotice(notices[0]!.slice('row:'.length))), task)).toBe(true);
    expect(notices[1]).toBe(`task:${task.id}`);
    expect((await board.tasks.get(task.id)).artifacts.requirement).toHaveLength(3_950);
  });

  it("ticks a watcher opened with reconcileMs, as the file board's does: a lead's panel follows a member of another process joining, which wakes nobody", async () => {
    const url = await freshDatabase();
    const joining = await open(url);
    const leading = await open(url);
    await joining.registry.ensure('crew');
    const events = leading.events({ reconcileMs: 50 });
    closers.push(() => events.close());
    await events.start();
    const shown: string[][] = [];
    events.on('board', () => shown.push(leading.registry.read().members.map((member) => member.name)));
    await joining.registry.join('worker-1', 'engineer');
    await until(() => shown.some((names) => names.includes('worker-1')), 'a tick that shows the member who joined');
  });

  it("sends no notification for a heartbeat (a member's or the lead's), and one for any other change of a document", async () => {
    const url = await freshDatabase();
    let clock = Date.parse('2026-01-01T00:00:00Z');
    const board = await open(url, { now: () => new Date(clock) });
    await board.registry.ensure('crew');
    await board.registry.join('engineer', 'engineer');
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    closers.push(() => client.end());
    const doc = async (key: string) => (await client.query<{ doc: Record<string, unknown> }>('SELECT doc FROM autoteam_docs WHERE key = $1', [key])).rows[0]?.doc;
    const heard: string[] = [];
    client.on('notification', (message) => heard.push(message.payload ?? ''));
    await client.query('LISTEN autoteam');
    // The lead's lease beats every 20 ms; the member beats three times, a minute apart on the board's clock.
    const lease = board.lease({ heartbeatMs: 20 });
    await lease.acquire();
    closers.push(() => lease.release());
    const version = async () => (await client.query<{ version: string }>("SELECT version FROM autoteam_docs WHERE key = 'lead'")).rows[0]!.version;
    const taken = await version();
    // Asked again every 10 ms until a beat has rewritten the lease (the test's timeout bounds it).
    while ((await version()) === taken) await new Promise((resolve) => setTimeout(resolve, 10));
    for (let i = 0; i < 3; i++) {
      clock += 60_000;
      await board.registry.heartbeat('engineer');
    }
    const members = (await doc('config'))!.members as Array<{ name: string; heartbeat: string }>;
    expect(members.find((member) => member.name === 'engineer')!.heartbeat).toBe(new Date(clock).toISOString());
    // A join is not a heartbeat: it is heard. Notifications come in commit order, so a heartbeat's would come first.
    await board.registry.join('analyst', 'analyst');
    const keys = () => heard.filter((payload) => payload.startsWith('docrow:')).map((payload) => (JSON.parse(payload.slice('docrow:'.length)) as { key: string }).key);
    await until(() => keys().includes('config') || undefined, 'the join to be heard');
    // The lease's acquiring is heard (with the lease); its beats and the member's are not.
    expect(keys()).toEqual(['lead', 'config']);
  });

  it("keeps its own write when a refresh that read before it answers after it (a join's member, a posted task)", async () => {
    const url = await freshDatabase();
    const made = await open(url);
    await made.registry.ensure('crew');
    const pool = createPool(url);
    closers.push(() => pool.end());
    const reads = holdable(pool);
    const docs = new PgDocStore(url, reads.pool);
    await docs.refresh();
    const registry = new TeamRegistry('/nonexistent', { docs });
    // The refresh's reply (the config without 'eng') is in; the join writes before it is let through.
    let held = reads.holdNext();
    const early = docs.refresh();
    await held.replied;
    await registry.join('eng', 'engineer');
    held.release();
    await early;
    expect(registry.names()).toEqual(['lead', 'eng']);
    // Another process's later write is still taken.
    await made.registry.join('qa', 'reviewer');
    await docs.refresh();
    expect(registry.names()).toEqual(['lead', 'eng', 'qa']);

    // The tasks: a full comparison that read before a post must not take the posted task for deleted.
    const tasks = new PgTaskBoard(url, reads.pool);
    held = reads.holdNext();
    const comparing = tasks.refresh();
    await held.replied;
    const posted = await tasks.create({ subject: 'posted meanwhile' });
    held.release();
    await comparing;
    expect(tasks.list().map((task) => task.id)).toEqual([posted.id]);
  });
});

describe.runIf(postgresBin)('the documents\' poll', () => {
  it('sends back only the documents whose version moved, and drops one deleted elsewhere', async () => {
    const url = await freshDatabase();
    const made = await open(url);
    await made.registry.ensure('crew');
    const request = await made.requests.create({ kind: 'plan', from: 'eng', to: 'lead', task: null, plan: 'a plan' });
    const pool = createPool(url);
    closers.push(() => pool.end());
    const replies: Array<Array<{ key: string; doc: unknown }>> = [];
    const watched = new Proxy(pool, {
      get(target, name) {
        if (name !== 'query') return Reflect.get(target, name);
        return async (...args: unknown[]) => {
          const reply = (await (target.query as (...a: unknown[]) => Promise<{ rows: Array<{ key: string; doc: unknown }> }>).apply(target, args));
          replies.push(reply.rows);
          return reply;
        };
      },
    }) as pg.Pool;
    const docs = new PgDocStore(url, watched);
    expect(await docs.refresh()).toBe(2);
    const bodies = () => replies.at(-1)!.filter((row) => row.doc !== null).map((row) => row.key);
    expect(bodies().sort()).toEqual(['config', `requests/${request.id}`]);
    // Nothing moved: every version comes back, no document.
    expect(await docs.refresh()).toBe(0);
    expect(replies.at(-1)!.length).toBe(2);
    expect(bodies()).toEqual([]);
    // One changed elsewhere: only it is sent, and read.
    await made.registry.join('eng', 'engineer');
    expect(await docs.refresh()).toBe(1);
    expect(bodies()).toEqual(['config']);
    expect(new TeamRegistry('/nonexistent', { docs }).names()).toEqual(['lead', 'eng']);
    // One deleted elsewhere is dropped.
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    closers.push(() => client.end());
    await client.query('DELETE FROM autoteam_docs WHERE key = $1', [`requests/${request.id}`]);
    expect(await docs.refresh()).toBe(1);
    expect(docs.keys('requests/')).toEqual([]);
  });
});

/** A real pool whose next query's reply can be held back after it arrived (as a slow notification's refresh is). */
function holdable(pool: pg.Pool) {
  let hold: { replied: () => void; released: Promise<void> } | null = null;
  const proxy = new Proxy(pool, {
    get(target, name) {
      if (name !== 'query') return Reflect.get(target, name);
      return async (...args: unknown[]) => {
        const reply = await (target.query as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        const mine = hold;
        hold = null;
        if (mine) {
          mine.replied();
          await mine.released;
        }
        return reply;
      };
    },
  }) as pg.Pool;
  return {
    pool: proxy,
    holdNext() {
      let release!: () => void;
      let replied!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      const answered = new Promise<void>((resolve) => (replied = resolve));
      hold = { replied, released };
      return { replied: answered, release };
    },
  };
}

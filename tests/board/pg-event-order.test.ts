/**
 * On the PostgreSQL board a post's event is written by its poster after the commit that wakes every
 * claimer, so a claimer's batch could land first: the log showed a task claimed before it was posted.
 * A batch that claims a task posted a moment ago waits for the post's event, and only that long.
 */
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { Board } from '../../src/core/board/board.js';
import type { PgTaskBoard } from '../../src/core/board/pg/pg-task-board.js';
import { PgEventLog } from '../../src/core/board/pg/pg-events.js';
import type { TeamEvent } from '../../src/core/events/schema.js';
import { until } from '../helpers/agent-wait.js';
import { boardBackends } from '../helpers/board-backends.js';
import { freshDatabase, postgresBin, usePostgres } from '../helpers/postgres.js';

usePostgres();
const { open } = boardBackends('autoteam-pg-order-');

const pool = (board: Board) => (board.tasks as PgTaskBoard).pool;
const types = (events: TeamEvent[]) => events.map((event) => `${event.type} #${event.task}`);
const posted = (task: number): TeamEvent => ({ type: 'task_posted', ts: new Date().toISOString(), team: 't', agent: 'lead', by: 'lead', task, pipeline: null, subject: 'x', stage: null, revision: 0 }) as TeamEvent;
const claimed = (task: number): TeamEvent => ({ type: 'task_claimed', ts: new Date().toISOString(), team: 't', agent: 'eng', task, pipeline: null, token: 1, takeover: false }) as TeamEvent;

/** Two processes' boards on one database: the poster's post is on the board but not yet in the log. */
async function postedUnlogged(): Promise<{ poster: Board; claimer: Board; id: number; url: string }> {
  const url = await freshDatabase();
  const poster = await open(url);
  const claimer = await open(url);
  // Its post told to nobody: as if the poster's append had not happened yet.
  poster.tasks.emitTo(null);
  const task = await poster.tasks.create({ subject: 'count the words', role: 'engineer', by: 'lead' });
  await claimer.tasks.refresh();
  return { poster, claimer, id: task.id, url };
}

describe.runIf(postgresBin)("the PostgreSQL event log: a claim after its task's post", () => {
  it("holds a claimer's batch until the post's event is in the log", async () => {
    const { poster, claimer, id } = await postedUnlogged();
    const log = claimer.log as PgEventLog;
    expect((await claimer.tasks.claim(id, 'eng', { role: 'engineer' })).ok).toBe(true);
    const flushed = claimer.sink.flush();
    await until(() => log.held > 0, 'the claim held back');
    expect(types(await claimer.log.read())).toEqual([]);
    // The poster's append comes: the claim follows it.
    await poster.log.append([posted(id)]);
    await flushed;
    expect(types(await claimer.log.read())).toEqual([`task_posted #${id}`, `task_claimed #${id}`]);
  });

  it('does not wait for a task posted long ago (imported, or made by hand), or one posted in the same batch', async () => {
    const { claimer, id, url } = await postedUnlogged();
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      await admin.query("UPDATE autoteam_tasks SET created_at = now() - interval '1 hour' WHERE id = $1", [id]);
    } finally {
      await admin.end();
    }
    const log = claimer.log as PgEventLog;
    await log.append([claimed(id)]);
    expect(log.held).toBe(0);
    // Posted now, its post not yet logged, and both in one batch: the post goes first, nothing waits.
    claimer.tasks.emitTo(null);
    const fresh = await claimer.tasks.create({ subject: 'another', role: 'engineer', by: 'lead' });
    await log.append([posted(fresh.id), claimed(fresh.id)]);
    expect(log.held).toBe(0);
    expect(types(await claimer.log.read())).toEqual([`task_claimed #${id}`, `task_posted #${fresh.id}`, `task_claimed #${fresh.id}`]);
  });

  it("two threads' batches that each hold a post the other's claim waits for both go in, every claim after its post", async () => {
    // One sink's batch may hold a post and then a claim (several teammates share a thread's sink).
    const { poster, claimer, id: x } = await postedUnlogged();
    const y = (await poster.tasks.create({ subject: 'review it', role: 'reviewer', by: 'engineer' })).id;
    const engineers = claimer.log as PgEventLog;
    const reviewers = poster.log as PgEventLog;
    await Promise.all([engineers.append([posted(y), claimed(x)]), reviewers.append([posted(x), claimed(y)])]);
    const order = types(await claimer.log.read());
    expect(order).toHaveLength(4);
    for (const task of [x, y]) expect(order.indexOf(`task_posted #${task}`)).toBeLessThan(order.indexOf(`task_claimed #${task}`));
    // A claim after a post of its own batch that another's claim waits for is not held: it goes in as it is.
    const z = (await poster.tasks.create({ subject: 'z', role: 'engineer', by: 'lead' })).id;
    const held = engineers.held;
    await engineers.append([claimed(z), posted(z + 1000)]);
    expect(engineers.held).toBe(held);
  });

  it('appends the claim after its wait when the post never comes (its poster died before writing it)', async () => {
    const { claimer, id } = await postedUnlogged();
    const log = new PgEventLog((claimer.tasks as PgTaskBoard).url, pool(claimer), { on: () => () => undefined }, 500, 150);
    const [appended] = await log.append([claimed(id)]);
    expect(log.held).toBeGreaterThan(0);
    expect(appended!.seq).toBe(1);
    expect(types(await claimer.log.read())).toEqual([`task_claimed #${id}`]);
  });
});

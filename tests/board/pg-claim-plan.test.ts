/**
 * A claim on the PostgreSQL board must cost the same with 5 pending tasks or 500: the claim statement
 * reads the pending index in id order and stops at the first row it can lock. The planner picks that
 * only when the tasks table has statistics; a burst of posts gets them at once (not within autovacuum's
 * minute), and the plan shows it.
 */
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { openTaskStore, type OpenedTaskStore } from '../../src/core/board/open.js';
import { CLAIM_PENDING } from '../../src/core/board/pg/task-sql.js';
import { freshDatabase, postgresBin, usePostgres } from '../helpers/postgres.js';

usePostgres();
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

/** The plan PostgreSQL uses for the prepared claim statement once it settles on a generic plan. */
async function claimPlan(url: string): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  closers.push(() => client.end());
  await client.query('BEGIN');
  await client.query(`PREPARE claim(text, text, int) AS ${CLAIM_PENDING}`);
  // Past five executions a prepared statement may switch to its generic plan: the one that counts.
  for (let i = 0; i < 6; i++) await client.query(`EXECUTE claim('racer', 'warm${i}', 30000)`);
  const { rows } = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN (COSTS OFF) EXECUTE claim('racer', 'x', 30000)`);
  await client.query('ROLLBACK');
  return rows.map((row) => row['QUERY PLAN']).join('\n');
}

describe.runIf(postgresBin)('the PostgreSQL claim statement', () => {
  it('reads the pending index in id order after a burst of 500 posts, instead of sorting every pending task', async () => {
    const url = await freshDatabase();
    const board: OpenedTaskStore = await openTaskStore(url);
    closers.push(async () => board.close?.());
    for (let i = 0; i < 500; i++) await board.create({ subject: `task ${i}`, role: i % 2 ? 'racer' : 'other', by: 'test' });
    const plan = await claimPlan(url);
    expect(plan).toMatch(/Index Scan using autoteam_tasks_pending/);
    expect(plan).not.toMatch(/Sort/);
    // And it claims in id order: the lowest pending task of the role first.
    expect(await board.claimNext('eng', 'racer')).toMatchObject({ ok: true, task: { id: 2, owner: 'eng' } });
  });
});

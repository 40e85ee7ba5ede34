/**
 * The scale benchmark's short version on PostgreSQL, with each role's four teammates in one thread
 * (one core shared out): the thread's board serves four teammates, each of which may hold a
 * connection (the pipeline's lock) while it asks for another (the successor's post). A pool sized for
 * one teammate was held whole by three waiting for a second, and their successors were never posted.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { runScale } from '../../src/bench/scale-run.js';
import { HANG_MS } from '../helpers/agent-wait.js';
import { freshDatabase, postgresBin, usePostgres } from '../helpers/postgres.js';

usePostgres();
const python = spawnSync('python3', ['--version']).status === 0;

describe.runIf(python && postgresBin)('scale bench, short, PostgreSQL: 4 pipelines on 12 teammates, four to a thread', () => {
  it('approves every pipeline, losing no task and claiming none twice', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-scale-short-pg-'));
    try {
      const url = await freshDatabase();
      const result = await runScale({ pipelines: 4, teammates: 12, processes: 1, cores: 1 }, url, root, { idleWindowMs: 1_000, settleMs: 0, ceilingMs: 2 * HANG_MS, log: () => {} });
      expect(result.errors).toEqual([]);
      expect(result.pipelines.map((pipeline) => pipeline.approved)).toEqual([true, true, true, true]);
      expect(result.audit).toMatchObject({ lostTasks: 0, notApproved: 0, doubleClaims: 0 });
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  }, 5 * HANG_MS);
});

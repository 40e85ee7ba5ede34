import path from 'node:path';
import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { TaskBoard } from '../../src/core/board/index.js';
import type { ClaimReport } from '../helpers/board-jobs.js';
import { Actor, startTogether, tempRoot } from '../helpers/board-spawn.js';

const TASKS = 500;

describe('claim race across worker threads and processes', () => {
  let root = '';
  afterEach(() => {
    if (root) fs.rmSync(root, { recursive: true, force: true });
  });

  it('claims every task exactly once and the file names the winner', async () => {
    root = tempRoot();
    const board = new TaskBoard(root);
    for (let i = 0; i < TASKS; i++) await board.create({ subject: `task ${i}` });
    const ids = board.list().map((task) => task.id);
    expect(ids).toHaveLength(TASKS);

    const actors: Actor<ClaimReport>[] = [];
    for (let i = 0; i < 8; i++) {
      // Two of the threads bypass claimNext and hammer claim(id) over every id in random order.
      const mode = i < 2 ? 'direct' : 'next';
      actors.push(Actor.thread(`thread ${i}`, { kind: 'claim', root, owners: [`t${i}`], mode, ids }, true));
    }
    for (let p = 0; p < 2; p++) {
      actors.push(
        Actor.process(`process ${p}`, { kind: 'claim', root, owners: [`p${p}a`, `p${p}b`], mode: 'next' }, true),
        Actor.process(`process ${p} direct`, { kind: 'claim', root, owners: [`p${p}d`], mode: 'direct', ids }, true),
      );
    }
    await startTogether(actors);
    const reports = await Promise.all(actors.map((actor) => actor.result));

    const winners = new Map<number, string[]>();
    for (const report of reports) {
      expect(report.errors).toEqual([]);
      for (const [owner, claimed] of Object.entries(report.claimed)) {
        for (const id of claimed) winners.set(id, [...(winners.get(id) ?? []), owner]);
      }
    }
    const doubles = [...winners].filter(([, owners]) => owners.length > 1);
    expect(doubles).toEqual([]);
    expect([...winners.keys()].sort((a, b) => a - b)).toEqual(ids);

    const fresh = new TaskBoard(root);
    for (const task of fresh.list()) {
      expect(task.status).toBe('in_progress');
      expect(task.owner).toBe(winners.get(task.id)![0]);
      expect(task.claims).toBe(1);
      expect(task.lease?.owner).toBe(task.owner);
    }
    // Every kind of claimer took part, so the race was real.
    const owners = new Set([...winners.values()].map(([owner]) => owner));
    expect(owners.size).toBeGreaterThan(4);
    expect(fresh.problems()).toEqual([]);
    expect(fs.readdirSync(path.join(fresh.dir, '.locks')).filter((name) => name.endsWith('.lock'))).toEqual([]);
  });
});

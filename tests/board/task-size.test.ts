/**
 * Task sizes that cannot wedge a board, on both backends: a task autoteam writes always reads back
 * (over the limit it is trimmed or refused, never stored too large), and a posted task has room to grow.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Board } from '../../src/core/board/board.js';
import { isPostgresUrl } from '../../src/core/board/pg/url.js';
import { MAX_TASK_FILE_BYTES, readTaskFile } from '../../src/core/board/task-file.js';
import { type HistoryEntry, type Task, TaskSchema } from '../../src/core/board/schemas.js';
import { fitTask, taskBytes } from '../../src/core/board/task-size.js';
import { formatLimit } from '../../src/core/sizes.js';
import { boardBackends } from '../helpers/board-backends.js';
import { usePostgres } from '../helpers/postgres.js';

usePostgres();

const MB = 1024 * 1024;
const { backends, open: openAt } = boardBackends();



function open(location: string): Promise<Board> {
  return openAt(location);
}

/** The task as its file is (or, on PostgreSQL, as an export would write it): read back, and its size. */
function stored(board: Board, task: Task): { task: Task; bytes: number } {
  if (isPostgresUrl(board.address)) return { task: board.tasks.get(task.id), bytes: Buffer.byteLength(`${JSON.stringify(board.tasks.get(task.id), null, 2)}\n`) };
  const file = path.join(board.rootDir, '.tasks', `task_${task.id}.json`);
  return { task: readTaskFile(file), bytes: fs.statSync(file).size };
}

describe.each(backends)('$name: task sizes', (backend) => {
  it('refuses a posted task over 4 MB in one line, and takes no id for it', async () => {
    const board = await open(await backend.location());
    const error = await board.tasks.create({ subject: 'Huge', description: 'd'.repeat(4 * MB + 10) }).catch((e: Error) => e);
    expect(error).toMatchObject({ code: 'TASK_TOO_LARGE' });
    expect((error as Error).message).toMatch(/^task 'Huge' would be 4\.0 MB, over the 4 MB a posted task may be \(task files are read up to 5 MB; the rest is room for autoteam's own updates\)$/);
    expect(board.tasks.list()).toEqual([]);
    expect((await board.tasks.create({ subject: 'small' })).id).toBe(1);
  });

  it("trims a write that would pass the limit — history, then the longest texts — so the task always reads back", { timeout: 120_000 }, async () => {
    const board = await open(await backend.location());
    const tasks = board.tasks;
    const posted = await tasks.create({ subject: 'Near the limit', description: 'd'.repeat(3.9 * MB), role: 'engineer' });
    const claim = await tasks.claim(posted.id, 'eng');
    expect(claim.ok).toBe(true);
    const fence = { owner: 'eng', token: 1 };
    // autoteam's own update (a tool's artifact) would take the task to ~5.4 MB.
    const updated = await tasks.update(posted.id, { artifacts: { summary: 's'.repeat(1.5 * MB) } }, { fence, event: 'summarised' });
    expect(updated.ok).toBe(true);
    let now = stored(board, posted);
    expect(now.bytes).toBeLessThanOrEqual(MAX_TASK_FILE_BYTES);
    expect(now.task.artifacts.summary!.length).toBe(1.5 * MB);
    expect(now.task.description).toMatch(/… cut: [\d.]+ KB more; not kept: a task is stored up to 4\.9 MB$/);
    expect(now.task.history.at(-1)).toMatchObject({ by: 'runtime', event: 'trimmed', detail: 'cut to stay under 4.9 MB: description' });

    // Every later write (claims, releases carrying usage, the end) keeps it readable.
    expect((await tasks.release(posted.id, fence)).ok).toBe(true);
    for (let round = 0; round < 4; round++) {
      const again = await tasks.claimNext(`eng${round}`, 'engineer');
      expect(again).toMatchObject({ ok: true, task: { id: posted.id } });
      const next = { owner: `eng${round}`, token: round + 2 };
      tasks.recordUsage(posted.id, { inputTokens: 10, outputTokens: 1 });
      if (round < 3) expect((await tasks.release(posted.id, next, 'r'.repeat(3_000))).ok).toBe(true);
      else expect((await tasks.complete(posted.id, next, 'done')).ok).toBe(true);
      now = stored(board, posted);
      expect(now.bytes).toBeLessThanOrEqual(MAX_TASK_FILE_BYTES);
    }
    expect(now.task).toMatchObject({ status: 'completed', result: 'done', claims: 5 });
  });
});

describe('fitTask', () => {
  const at = '2026-01-01T00:00:00.000Z';
  const entry = (detail: string): HistoryEntry => ({ at, by: 'runtime', event: 'trimmed', detail });
  const base = (fields: Partial<Task>): Task => TaskSchema.parse({ id: 3, subject: 'A task', status: 'in_progress', createdAt: at, updatedAt: at, ...fields });

  it('trims the history first: details cut, the oldest entries but the first dropped, and says so', () => {
    const history = [{ at, by: 'lead', event: 'created', detail: 'A task' }, ...Array.from({ length: 200 }, (_, i) => ({ at, by: 'eng', event: `ran ${i}`, detail: 'x'.repeat(i === 199 ? 50_000 : 300) }))];
    const task = base({ history });
    const limit = taskBytes(task) - 40_000;
    const fitted = fitTask(task, limit, (t) => taskBytes(t), entry);
    expect('task' in fitted).toBe(true);
    const { task: trimmed } = fitted as { task: Task };
    expect(taskBytes(trimmed)).toBeLessThanOrEqual(limit);
    expect(trimmed.history.map((h) => h.event)).toEqual(['created', ...Array.from({ length: 50 }, (_, i) => `ran ${150 + i}`), 'trimmed']);
    expect(trimmed.history.at(-2)!.detail!.length).toBeLessThan(2_200);
    expect(trimmed.history.at(-1)!.detail).toBe(`cut to stay under ${formatLimit(limit)}: 150 older history entries, long history details`);
    // The task given is left as it was.
    expect(task.history).toHaveLength(201);
  });

  it('cuts the longest texts, artifacts included, by what is needed; refuses what it cannot cut', () => {
    const task = base({ description: 'd'.repeat(300_000), artifacts: { summary: 's'.repeat(200_000), reports: { docs: 'r'.repeat(100_000) } } });
    const limit = taskBytes(task) - 150_000;
    const { task: trimmed } = fitTask(task, limit, (t) => taskBytes(t), entry) as { task: Task };
    expect(taskBytes(trimmed)).toBeLessThanOrEqual(limit);
    expect(trimmed.description.length).toBeLessThan(300_000);
    expect(trimmed.artifacts.reports!.docs).toBe('r'.repeat(100_000));
    expect(trimmed.history.at(-1)!.detail).toMatch(/^cut to stay under [\d.]+ KB: description/);

    // Thousands of short entries: nothing long enough to cut.
    const many = base({ artifacts: { criteria: Array.from({ length: 20_000 }, (_, i) => ({ id: `AC${i + 1}`, criterion: 'c'.repeat(60), verify: 'v'.repeat(60) })) } });
    const refused = fitTask(many, taskBytes(many) - 100_000, (t) => taskBytes(t), entry);
    expect(refused).toEqual({ refused: expect.stringMatching(/^task #3 would be [\d.]+ MB, over the [\d.]+ MB autoteam stores a task up to \(files are read up to 5 MB\), even with its history and longest texts cut; the write is refused$/) });
  });
});

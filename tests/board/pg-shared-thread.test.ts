/**
 * A teammate of a shared thread stopped while the thread's PostgreSQL board is still opening (the
 * server away): it leaves at once, and the other teammate of the thread waits on for the board,
 * rather than both being ended by force when the stop's grace runs out.
 */
import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { TeammateManager } from '../../src/core/agent/manager.js';
import { openBoard } from '../../src/core/board/board.js';
import type { Board } from '../../src/core/board/board-types.js';
import { startPostgres, type PostgresServer } from '../../src/bench/postgres-server.js';
import { tempRoot } from '../helpers/board-spawn.js';
import { FAKE_MODEL_PATH } from '../helpers/fake-model.js';
import { postgresBin } from '../helpers/postgres.js';

const HANG = { kind: 'module' as const, path: FAKE_MODEL_PATH, options: { script: 'hang' as const } };

describe.runIf(postgresBin)('a shared thread whose database is away', () => {
  let server: PostgresServer | null = null;
  let board: Board | null = null;
  let manager: TeammateManager | null = null;
  let root = '';
  afterEach(async () => {
    server?.resume();
    await manager?.close(2_000);
    await board?.close();
    server?.stop();
    if (root) fs.rmSync(root, { recursive: true, force: true });
  });

  it('lets one teammate stopped during the open leave at once, and keeps the other', async () => {
    server = await startPostgres(postgresBin!);
    root = tempRoot('autoteam-pg-shared-');
    board = await openBoard(server.url, root);
    await board.registry.ensure('crew');
    server.pause();
    manager = new TeammateManager({ rootDir: root, board, model: HANG, settings: { idleTimeoutMs: 0 }, cores: 1 });
    const [first, second] = manager.spawnTeam([
      { name: 'eng-1', role: 'engineer' },
      { name: 'eng-2', role: 'engineer' },
    ]);
    expect(first!.worker).toBe(second!.worker);

    // A grace far past a thread's start on a loaded machine: one ended by force (the fault) would take all of it.
    const graceMs = 30_000;
    const started = Date.now();
    const exit = await manager.stop('eng-1', graceMs);

    expect(exit).toMatchObject({ name: 'eng-1', kind: 'left', why: 'stopped', reason: 'stopped before it started' });
    // Left on its own word, well inside the grace, and its thread still runs for eng-2.
    expect(Date.now() - started).toBeLessThan(graceMs / 2);
    expect(manager.get('eng-2')?.worker).toBe(first!.worker);
  });
});

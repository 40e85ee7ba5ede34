/**
 * A board file broken by hand while a team runs: the watcher's listeners that read it throw, from a
 * timer. That is said once as the watcher's `error`, the other listeners are still told, and the
 * team config shown is the last one read well; before, the lead's process ended with a stack trace.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TeamRegistry } from '../../src/core/board/team-registry.js';
import { BoardWatcher } from '../../src/core/board/watcher.js';
import { removeBoard, tempBoard, until } from '../helpers/agent-wait.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

describe('a board file broken while the team runs', () => {
  it("a listener that throws is one `error`, said again only after the board read clean; the others are still told", async () => {
    const root = tempBoard();
    cleanups.push(() => removeBoard(root));
    const registry = new TeamRegistry(root);
    await registry.ensure('crew');
    expect(registry.read().team).toBe('crew');
    const watcher = new BoardWatcher(root, { reconcileMs: 20 });
    cleanups.push(() => watcher.close());
    const errors: string[] = [];
    let told = 0;
    watcher.on('error', (error) => errors.push(error.message));
    watcher.on('board', () => void registry.read());
    watcher.on('board', () => void told++);
    await watcher.start();

    const file = path.join(root, '.team', 'config.json');
    const good = fs.readFileSync(file, 'utf8');
    fs.writeFileSync(file, '{"team": ');
    await until(() => told >= 5 || undefined, 'five reconcile ticks with the file broken');
    expect(errors).toEqual([expect.stringMatching(/config\.json: not valid JSON .*fix it, or delete it/)]);
    // What is shown keeps the last config read well; a read for a change still throws.
    expect(registry.shown().team).toBe('crew');
    expect(() => registry.read()).toThrow(/not valid JSON/);

    fs.writeFileSync(file, good);
    const mended = told;
    await until(() => told >= mended + 3 || undefined, 'ticks with the file mended');
    fs.writeFileSync(file, '{"team": ');
    await until(() => errors.length === 2 || undefined, 'the second break said');
    expect(errors[1]).toBe(errors[0]);
  });
});

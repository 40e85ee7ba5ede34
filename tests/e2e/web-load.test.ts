/**
 * The web board under load: five real browsers on a board of 10,000 tasks while a pipeline runs.
 * Every page gets the whole board once, draws at most 150 cards a column, and follows the pipeline's
 * cards live to completed; filters still answer. (Times and sizes are in `npm run bench`'s web section.)
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { HANG_MS } from '../helpers/agent-wait.js';
import { chromiumPath, useBrowsers } from '../helpers/browser.js';
import { tempRoot } from '../helpers/board-spawn.js';
import { CliChild } from '../helpers/cli-child.js';

const TASKS = 10_000;
const BROWSERS = 5;

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
const { launch } = useBrowsers();

describe.runIf(chromiumPath)('the web board under load', () => {
  it(`${BROWSERS} browsers on a ${TASKS}-task board follow a pipeline to the end`, { timeout: 600_000 }, async () => {
    const dir = tempRoot('autoteam-web-load-');
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    // Task files as a person or another tool writes them (a subject is all a task file needs): work
    // of a role nobody on the team has, so the board stays this big; a quarter of it done already.
    fs.mkdirSync(path.join(dir, '.tasks'));
    for (let i = 1; i <= TASKS; i++) {
      const task = { subject: `Archive batch ${i}`, description: 'old records', role: 'archivist', status: i % 4 === 0 ? 'completed' : 'pending' };
      fs.writeFileSync(path.join(dir, '.tasks', `task_${i}.json`), JSON.stringify(task));
    }

    const repl = CliChild.start(['--dir', dir, '--auto', '--web', '0'], { cwd: dir, stdin: 'pipe' });
    cleanups.push(() => repl.stop('SIGTERM'));
    const address = await repl.waitFor(() => /autoteam web: (http:\/\/\S+)/.exec(repl.stderr)?.[1], "the web board's address");
    const pages = await Promise.all(
      Array.from({ length: BROWSERS }, async () => {
        const page = await (await (await launch()).newContext()).newPage();
        // Five browsers loading a 10,000-task page on two busy cores: a hang's ceiling, not playwright's 30 s.
        await page.goto(address, { timeout: HANG_MS });
        await page.locator('.filters .muted', { hasText: `${TASKS} of ${TASKS} tasks` }).waitFor({ timeout: HANG_MS });
        return page;
      }),
    );
    for (const page of pages) {
      // Drawn, not all 10,000: a column shows its newest 150 and says how many more there are.
      expect(await page.locator('[data-testid^=card-]').count()).toBeLessThanOrEqual(5 * 150);
      expect(await page.locator('[data-testid=column-pending]').textContent()).toMatch(/7350 more: filter to see them/);
      expect(await page.locator('[data-testid=column-completed]').textContent()).toMatch(/2350 more: filter to see them/);
    }

    const [first] = pages;
    await first!.fill('[data-testid=requirement]', 'Write a Python script that organizes my Downloads folder by file type.');
    await first!.click('[data-testid=post]');
    const line = (await first!.locator('[data-testid=post-line]').textContent({ timeout: HANG_MS })) ?? '';
    const pipeline = Number(/posted pipeline #(\d+)/.exec(line)?.[1]);
    expect(pipeline).toBeGreaterThan(0);
    await Promise.all(
      pages.map(async (page) => {
        await page.fill('[data-testid=filter-pipeline]', String(pipeline));
        // The filter answers at once, on 10,001 cards.
        await page.locator('.filters .muted', { hasText: / of 10\d{3} tasks/ }).waitFor({ timeout: HANG_MS });
        // The review's card reaches completed: the pipeline's last step, seen live on every page.
        await page.locator('[data-testid=column-completed] [data-stage=review]').waitFor({ timeout: HANG_MS });
        expect(await page.locator('[data-testid=column-completed] [data-testid^=card-]').count()).toBeGreaterThanOrEqual(3);
      }),
    );
  });
});

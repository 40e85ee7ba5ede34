import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { atMost, type BenchSection, info, percentile, withTempRoot } from './section.js';

const BUNDLED = fileURLToPath(new URL('../cli/bundle/main.js', import.meta.url));
const UNBUNDLED = fileURLToPath(new URL('../cli/main.js', import.meta.url));

/** Wall times of `node <main> tasks --dir <empty board>`, one run after another, in ms. */
function runs(main: string, dir: string, count: number): number[] {
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    const run = spawnSync(process.execPath, [main, 'tasks', '--dir', dir], { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
    if (run.status !== 0) throw new Error(`${main} tasks exited ${run.status}: ${run.stderr}`);
    times.push(performance.now() - started);
  }
  return times;
}

/**
 * A command's start: `autoteam tasks` on an empty board, from the process's start to its exit —
 * what every command pays before it does its work. The bundle the `autoteam` command runs
 * (scripts/build-cli.mjs), and beside it the same command unbundled, run in turns so that both see
 * the same machine: their ratio is what to read on a noisy one.
 */
export const commandStart: BenchSection = {
  name: 'command start',
  run: (options) =>
    withTempRoot('command', async (dir) => {
      fs.mkdirSync(dir, { recursive: true });
      const rounds = options.quick ? 3 : 10;
      const bundled: number[] = [];
      const unbundled: number[] = [];
      runs(BUNDLED, dir, 2); // the disk's cache warm for both
      runs(UNBUNDLED, dir, 2);
      for (let round = 0; round < rounds; round++) {
        bundled.push(...runs(BUNDLED, dir, 2));
        unbundled.push(...runs(UNBUNDLED, dir, 2));
      }
      const median = (values: number[]) => Math.round(percentile(values, 50));
      return [
        atMost('autoteam tasks, start to exit (median)', median(bundled), 'ms', 500),
        info('the same, unbundled dist/cli/main.js (median)', median(unbundled), 'ms'),
        info('bundled / unbundled', Math.round((median(bundled) / median(unbundled)) * 100) / 100, '×'),
      ];
    }),
};

import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { within } from '../../src/core/within.js';

describe('within: a wait with a ceiling', () => {
  it('gives the promise’s value when it settles first, and the late value when the ceiling comes first', async () => {
    expect(await within(Promise.resolve('done'), 10_000, 'late')).toBe('done');
    expect(await within(new Promise<string>(() => {}), 20, 'late')).toBe('late');
    await expect(within(Promise.reject(new Error('failed')), 10_000, 'late')).rejects.toThrow('failed');
  });

  it('never holds the process open itself', () => {
    // A child that waits on a promise nothing settles, under a ten-second ceiling: it exits at once,
    // since nothing but the ceiling is left; a ceiling that kept the process alive would make it wait.
    const script = `
      import { within } from ${JSON.stringify(new URL('../../src/core/within.ts', import.meta.url).pathname)};
      await within(Promise.resolve(1), 10_000, 0);
      const started = Date.now();
      process.on('exit', () => console.log('exited after', Date.now() - started, 'ms'));
      void within(new Promise(() => {}), 10_000, 0);
    `;
    const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 8_000 });
    expect(run.status, run.stderr).toBe(0);
    expect(Number(/exited after (\d+) ms/.exec(run.stdout)?.[1])).toBeLessThan(5_000);
  });
});

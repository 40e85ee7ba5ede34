import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { launchProcess, launcherPid } from '../../src/core/exec/launcher.js';

/**
 * A python3 first on PATH whose first launcher start fails (as a start can for a moment: no memory
 * for a fork, an interpreter being upgraded), and which is the real interpreter after that. Each test
 * file has its own module state, so this file's launcher is started from it.
 */
let dir: string;
let savedPath: string | undefined;
const attempts = () => (fs.existsSync(path.join(dir, 'attempts')) ? fs.readFileSync(path.join(dir, 'attempts'), 'utf8').split('\n').filter(Boolean).length : 0);

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-launcher-retry-'));
  const real = execFileSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).trim();
  const fake = path.join(dir, 'python3');
  fs.writeFileSync(
    fake,
    [
      '#!/bin/bash',
      // Asked which interpreter it is: this script.
      `case "$*" in *"print(sys.executable)"*) echo ${JSON.stringify(fake)}; exit 0;; esac`,
      `echo start >> ${JSON.stringify(path.join(dir, 'attempts'))}`,
      `if [ ! -e ${JSON.stringify(path.join(dir, 'failed-once'))} ]; then touch ${JSON.stringify(path.join(dir, 'failed-once'))}; exit 3; fi`,
      `exec ${JSON.stringify(real)} "$@"`,
      '',
    ].join('\n'),
    { mode: 0o755 },
  );
  savedPath = process.env.PATH;
  process.env.PATH = `${dir}${path.delimiter}${process.env.PATH ?? ''}`;
});

afterAll(() => {
  vi.useRealTimers();
  process.env.PATH = savedPath;
  fs.rmSync(dir, { recursive: true, force: true });
});

async function parentOfRun(): Promise<number> {
  const run = await launchProcess({ argv: ['bash', '-c', 'echo $PPID'], cwd: os.tmpdir(), env: { PATH: process.env.PATH! }, maxBuffer: 10_000 });
  const outcome = await run.outcome;
  expect(outcome.exitCode).toBe(0);
  return Number(outcome.stdout.trim());
}

describe('a launcher that could not start', () => {
  it('leaves the runs to start directly for a while, then is tried again', async () => {
    // The launcher's start fails: the run starts directly, from this process, and still runs.
    expect(await parentOfRun()).toBe(process.pid);
    expect(attempts()).toBe(1);
    expect(launcherPid()).toBeUndefined();
    // At once after: directly, without trying again.
    expect(await parentOfRun()).toBe(process.pid);
    expect(attempts()).toBe(1);
    // Half a minute on, a launcher is tried again; it starts, and runs go through it.
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 31_000);
    const parent = await parentOfRun();
    expect(attempts()).toBe(2);
    expect(launcherPid()).toBeGreaterThan(0);
    expect(parent).toBe(launcherPid());
  });
});

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capOutput, describeExit, formatProcessResult, type ProcessResult, runProcess } from '../../src/core/exec/process.js';
import { launcherPid, startDirectly } from '../../src/core/exec/launcher.js';
import { HANG_MS } from '../helpers/agent-wait.js';

const base = { cwd: os.tmpdir(), timeoutMs: 20_000, maxOutputChars: 10_000 };

/**
 * A `sleep` of an hour and some digits of its own: a process that never ends by itself within a
 * test, so a call that returns proves it was stopped, and `alive` finds exactly this one.
 */
function hourSleep(): string {
  return `sleep 3600.${Math.floor(Math.random() * 1e6)}${process.pid % 1000}`;
}

function alive(pattern: string): boolean {
  try {
    execFileSync('pgrep', ['-f', pattern]);
    return true;
  } catch {
    return false;
  }
}

/**
 * Runs `command` with a timeout long enough for it to print `started` first: a machine too slow to
 * get there in time gets the run again with twice the time, so the kill always comes after the start.
 */
async function timedOutAfterStart(command: string): Promise<ProcessResult> {
  for (let timeoutMs = 300; ; timeoutMs *= 2) {
    const result = await runProcess('bash', ['-c', command], { ...base, timeoutMs });
    if (result.stdout === 'started' || timeoutMs > HANG_MS) return result;
  }
}

// Through the thread's launcher, and started directly (where no python3 can run the launcher).
describe.each(['launcher', 'direct'] as const)('runProcess (%s)', (mode) => {
  beforeAll(() => startDirectly(mode === 'direct'));
  afterAll(() => startDirectly(false));

  it('returns exit code, stdout and stderr', async () => {
    const result = await runProcess('bash', ['-c', 'echo out; echo err >&2; exit 3'], base);
    expect(result).toMatchObject({ exitCode: 3, stdout: 'out', stderr: 'err', timedOut: false });
    // Each mode is the one it says it is.
    if (mode === 'launcher') expect(launcherPid()).toBeGreaterThan(0);
    else expect(launcherPid()).toBeUndefined();
    expect(formatProcessResult(result)).toMatch(/^exit 3 \(\d+ ms\)\nstdout:\nout\nstderr:\nerr$/);
  });

  it('kills a command that outlives its timeout', async () => {
    const sleep = hourSleep();
    const result = await runProcess('bash', ['-c', `${sleep}; echo never`], { ...base, timeoutMs: 300 });
    expect(result).toMatchObject({ timedOut: true, exitCode: null, signal: 'SIGKILL' });
    expect(result.stdout).not.toContain('never');
    expect(alive(sleep)).toBe(false);
  });

  it('kills a python busy loop on timeout', async () => {
    const result = await runProcess('python3', ['-c', 'while True:\n    pass'], { ...base, timeoutMs: 300 });
    expect(result.timedOut).toBe(true);
    expect(result.exitCode).toBeNull();
  });

  it('kills the whole process group, background children included', async () => {
    const sleep = hourSleep();
    const result = await timedOutAfterStart(`${sleep} & echo started; wait`);
    expect(result.timedOut).toBe(true);
    expect(result.stdout).toBe('started');
    expect(alive(sleep)).toBe(false);
  });

  it('does not wait for an orphan that keeps the output pipe open', async () => {
    // Had the call waited for the orphan, it would have taken an hour.
    const sleep = hourSleep();
    const result = await runProcess('bash', ['-c', `(${sleep} &); echo done`], base);
    expect(result).toMatchObject({ exitCode: 0, stdout: 'done', timedOut: false });
    expect(alive(sleep)).toBe(false);
  });

  it('caps long output with a note of how much was cut', async () => {
    const result = await runProcess('python3', ['-c', 'print("x" * 5000, end="")'], { ...base, maxOutputChars: 100 });
    expect(result.stdout).toContain('…[4900 more characters cut]…');
    expect(result.stdout.length).toBeLessThan(200);
    expect(capOutput('short', 100)).toBe('short');
  });

  it('stops a runaway writer at the buffer limit', async () => {
    const result = await runProcess('bash', ['-c', 'yes'], { ...base, maxOutputChars: 1000 });
    expect(result.timedOut).toBe(false);
    expect(result.stdout).toMatch(/more characters cut/);
    expect(result.stderr).toMatch(/passed the limit/);
    // Said as what happened, not as a signal from nowhere.
    expect(result.overflowBytes).toBe(1 << 20);
    expect(formatProcessResult(result).split('\n')[0]).toMatch(/^stopped: its output passed 1(\.0)? MB \(\d+ ms\)$/);
    expect(describeExit(result)).toMatch(/^stopped: output passed 1(\.0)? MB$/);
  });

  it('reports a missing program clearly', async () => {
    const result = await runProcess('no-such-interpreter-xyz', ['x'], base);
    expect(result.exitCode).toBe(127);
    expect(result.error).toMatch(/program 'no-such-interpreter-xyz' was not found/);
    expect(formatProcessResult(result)).toMatch(/^error: program 'no-such-interpreter-xyz' was not found/);
  });

  it('reports a missing working directory', async () => {
    const result = await runProcess('bash', ['-c', 'true'], { ...base, cwd: '/no/such/dir/autoteam' });
    expect(result.error).toMatch(/working directory .* does not exist/);
  });

  it('feeds input on stdin, and stdin is empty otherwise', async () => {
    const echoed = await runProcess('bash', ['-c', 'cat'], { ...base, input: 'hello' });
    expect(echoed.stdout).toBe('hello');
    const empty = await runProcess('python3', ['-c', 'import sys; print(repr(sys.stdin.read()))'], base);
    expect(empty.stdout).toBe("''");
  });

  it('stops when the caller aborts', async () => {
    const controller = new AbortController();
    const sleep = hourSleep();
    const running = runProcess('bash', ['-c', `echo go; ${sleep}`], { ...base, signal: controller.signal });
    controller.abort();
    const result = await running;
    expect(result.canceled).toBe(true);
    expect(alive(sleep)).toBe(false);
  });

  it('runs without the parent process secrets', async () => {
    const saved = process.env.ANTHROPIC_API_KEY;
    process.env.ANTHROPIC_API_KEY = 'sk-ant-test-secret';
    try {
      const result = await runProcess('bash', ['-c', 'env'], base);
      expect(result.stdout).not.toContain('sk-ant-test-secret');
      expect(result.stdout).not.toContain('ANTHROPIC_API_KEY');
      expect(result.stdout).toContain('PATH=');
    } finally {
      if (saved === undefined) delete process.env.ANTHROPIC_API_KEY;
      else process.env.ANTHROPIC_API_KEY = saved;
    }
  });

  it('uses the given working directory', async () => {
    const dir = fs.realpathSync(os.tmpdir());
    const result = await runProcess('bash', ['-c', 'pwd -P'], { ...base, cwd: dir });
    expect(result.stdout).toBe(dir);
  });
});

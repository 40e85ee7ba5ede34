import fs from 'node:fs';
import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { capOutput, formatProcessResult, runProcess } from '../../src/core/exec/process.js';

const base = { cwd: os.tmpdir(), timeoutMs: 20_000, maxOutputChars: 10_000 };

describe('runProcess', () => {
  it('returns exit code, stdout and stderr', async () => {
    const result = await runProcess('bash', ['-c', 'echo out; echo err >&2; exit 3'], base);
    expect(result).toMatchObject({ exitCode: 3, stdout: 'out', stderr: 'err', timedOut: false });
    expect(formatProcessResult(result)).toMatch(/^exit 3 \(\d+ ms\)\nstdout:\nout\nstderr:\nerr$/);
  });

  it('kills a command that outlives its timeout', async () => {
    const result = await runProcess('bash', ['-c', 'sleep 30; echo never'], { ...base, timeoutMs: 300 });
    expect(result.timedOut).toBe(true);
    expect(result.stdout).not.toContain('never');
    expect(result.durationMs).toBeLessThan(10_000);
  });

  it('kills a python busy loop on timeout', async () => {
    const result = await runProcess('python3', ['-c', 'while True:\n    pass'], { ...base, timeoutMs: 300 });
    expect(result.timedOut).toBe(true);
    expect(result.exitCode).toBeNull();
  });

  it('kills the whole process group, background children included', async () => {
    const started = Date.now();
    const result = await runProcess('bash', ['-c', 'sleep 30 & echo started; wait'], { ...base, timeoutMs: 300 });
    expect(result.timedOut).toBe(true);
    expect(result.stdout).toBe('started');
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('does not wait for an orphan that keeps the output pipe open', async () => {
    const result = await runProcess('bash', ['-c', '(sleep 30 &); echo done'], base);
    expect(result).toMatchObject({ exitCode: 0, stdout: 'done', timedOut: false });
    expect(result.durationMs).toBeLessThan(10_000);
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
    const running = runProcess('bash', ['-c', 'echo go; sleep 30'], { ...base, signal: controller.signal });
    controller.abort();
    const result = await running;
    expect(result.canceled).toBe(true);
    expect(result.durationMs).toBeLessThan(10_000);
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

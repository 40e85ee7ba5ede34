import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bashTool } from '../../src/core/tools/bash.js';
import { executeCodeTool } from '../../src/core/tools/execute-code.js';
import { call, makeToolContext, type TestContext } from './context.js';

let t: TestContext;
beforeEach(() => {
  t = makeToolContext({ maxOutputChars: 500 });
});
afterEach(() => t.cleanup());

describe('bash', () => {
  it('runs in the workspace and records the command with its exit status', async () => {
    fs.writeFileSync(path.join(t.workspace, 'a.txt'), 'hello');
    const outcome = await call(bashTool, { command: 'pwd -P; cat a.txt; exit 2' }, t.ctx);
    expect(outcome.isError).toBeUndefined();
    expect(outcome.content).toMatch(new RegExp(`^exit 2 \\(\\d+ ms\\)\\nstdout:\\n${t.workspace}\\nhello$`));
    expect(t.records).toEqual([{ event: 'ran', detail: 'pwd -P; cat a.txt; exit 2 → exit 2' }]);
  });

  it('does not pass the parent secrets to the command', async () => {
    const saved = process.env.ANTHROPIC_API_KEY;
    process.env.ANTHROPIC_API_KEY = 'sk-ant-bash-secret';
    try {
      const outcome = await call(bashTool, { command: 'env; echo "key=[${ANTHROPIC_API_KEY:-}]"' }, t.ctx);
      expect(outcome.content).toContain('key=[]');
      expect(outcome.content).not.toContain('sk-ant-bash-secret');
    } finally {
      if (saved === undefined) delete process.env.ANTHROPIC_API_KEY;
      else process.env.ANTHROPIC_API_KEY = saved;
    }
  });

  it('kills a command that passes the time limit and says so', async () => {
    t.ctx.limits.commandTimeoutMs = 300;
    const outcome = await call(bashTool, { command: 'sleep 30' }, t.ctx);
    expect(outcome.isError).toBe(true);
    expect(outcome.content).toMatch(/^timed out after 300 ms; the process was killed/);
    expect(t.records).toEqual([{ event: 'ran', detail: 'sleep 30 → timed out' }]);
  });

  it('caps long output', async () => {
    const outcome = await call(bashTool, { command: 'seq 1 10000' }, t.ctx);
    expect(outcome.content).toMatch(/…\[\d+ more characters cut\]…/);
    expect(outcome.content.length).toBeLessThan(700);
  });
});

describe('execute_code', () => {
  it('runs Python and records the exit code', async () => {
    const outcome = await call(executeCodeTool, { code: 'print(sum(range(10)))' }, t.ctx);
    expect(outcome.content).toMatch(/^\[python\] exit 0 \(\d+ ms\)\nstdout:\n45$/);
    expect(t.records).toEqual([{ event: 'executed', detail: 'python → exit 0' }]);
  });

  it('runs JavaScript and reports a failure as a result', async () => {
    const outcome = await call(executeCodeTool, { code: 'console.log("js"); process.exit(4);', language: 'javascript' }, t.ctx);
    expect(outcome.isError).toBeUndefined();
    expect(outcome.content).toMatch(/^\[javascript\] exit 4 .*\nstdout:\njs$/);
    expect(t.records).toEqual([{ event: 'executed', detail: 'javascript → exit 4' }]);
  });

  it('times out an endless loop as a tool error', async () => {
    t.ctx.limits.commandTimeoutMs = 300;
    const outcome = await call(executeCodeTool, { code: 'while True:\n    pass', language: 'python' }, t.ctx);
    expect(outcome.isError).toBe(true);
    expect(outcome.content).toMatch(/timed out/);
  });

  it('rejects bad arguments at the schema', () => {
    expect(executeCodeTool.inputSchema.safeParse({ code: 'x', language: 'ruby' }).success).toBe(false);
    expect(executeCodeTool.inputSchema.safeParse(null).success).toBe(false);
  });
});

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { executeCode, guessLanguage } from '../../src/core/exec/execute.js';

let workspace: string;
const options = { timeoutMs: 20_000, maxOutputChars: 10_000 };
beforeEach(() => {
  workspace = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-exec-')));
});
afterEach(() => fs.rmSync(workspace, { recursive: true, force: true }));

describe('guessLanguage', () => {
  it('recognises Python and defaults to JavaScript', () => {
    expect(guessLanguage('def main():\n    pass')).toBe('python');
    expect(guessLanguage('import os\nos.getcwd()')).toBe('python');
    expect(guessLanguage('from pathlib import Path')).toBe('python');
    expect(guessLanguage('print("hi")')).toBe('python');
    expect(guessLanguage('while True:\n    pass')).toBe('python');
    expect(guessLanguage('for (const x of [1]) {\n  if (x) console.log(x ? 1 : 2);\n}')).toBe('javascript');
    expect(guessLanguage("import fs from 'node:fs';\nconsole.log(fs)")).toBe('javascript');
    expect(guessLanguage('console.log(1 + 1)')).toBe('javascript');
    expect(guessLanguage('const n: number = 1;\nconsole.log(n);')).toBe('typescript');
    expect(guessLanguage('interface P { x: number }')).toBe('typescript');
    expect(guessLanguage('const o = { a: 1, b: "s" };')).toBe('javascript');
  });
});

describe('executeCode', () => {
  it('runs Python in the workspace and cleans up its temp file', async () => {
    fs.writeFileSync(path.join(workspace, 'data.txt'), 'hello');
    const result = await executeCode(workspace, 'import os\nprint(os.getcwd())\nprint(open("data.txt").read())', options);
    expect(result).toMatchObject({ language: 'python', exitCode: 0, stdout: `${workspace}\nhello` });
    expect(fs.readdirSync(path.join(workspace, '.run'))).toEqual([]);
  });

  it('runs JavaScript as ESM, or as CommonJS when it uses require', async () => {
    const esm = await executeCode(workspace, "import path from 'node:path';\nconsole.log(path.basename(process.cwd()));", options);
    expect(esm).toMatchObject({ language: 'javascript', exitCode: 0, stdout: path.basename(workspace) });
    const cjs = await executeCode(workspace, "const os = require('node:os');\nconsole.log(typeof os.tmpdir());", { ...options, language: 'javascript' });
    expect(cjs.stdout).toBe('string');
  });

  it('runs TypeScript', async () => {
    const result = await executeCode(workspace, 'const n: number = 6 * 7;\nconsole.log(n);', { ...options, language: 'typescript' });
    expect(result).toMatchObject({ language: 'typescript', exitCode: 0, stdout: '42' });
  });

  it('returns failures and timeouts as results', async () => {
    const failed = await executeCode(workspace, 'raise ValueError("bad input")', { ...options, language: 'python' });
    expect(failed.exitCode).toBe(1);
    expect(failed.stderr).toContain('ValueError: bad input');
    const looping = await executeCode(workspace, 'while True:\n    pass', { ...options, timeoutMs: 300 });
    expect(looping.timedOut).toBe(true);
  });
});

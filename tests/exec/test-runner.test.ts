import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { formatTestResult, runTests } from '../../src/core/exec/test-runner.js';
import { PYTHON_ORGANIZER } from './fixtures.js';

let workspace: string;
const options = { timeoutMs: 20_000, maxOutputChars: 10_000 };
beforeEach(() => {
  workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-tests-'));
});
afterEach(() => fs.rmSync(workspace, { recursive: true, force: true }));

const write = (name: string, content: string): void => fs.writeFileSync(path.join(workspace, name), content);

describe('runTests smoke run (no engineer tests)', () => {
  it('passes a script that exits 0, run in a scratch dir of sample files given as argv[1]', async () => {
    write('organize.py', PYTHON_ORGANIZER);
    const result = await runTests(workspace, 'organize.py', options);
    expect(result).toMatchObject({ ok: true, mode: 'smoke', exitCode: 0, file: 'organize.py' });
    expect(result.command).toMatch(/^python3 organize\.py .*autoteam-smoke-/);
    expect(result.output).toContain('moved a.txt -> txt/');
    expect(result.output).toMatch(/files in the scratch directory after the run: .*jpg\/b\.jpg/);
    // The workspace itself is untouched and the scratch dir is gone.
    expect(fs.readdirSync(workspace)).toEqual(['organize.py']);
    expect(fs.existsSync(result.command.split(' ')[2]!)).toBe(false);
    expect(formatTestResult(result)).toMatch(/^organize\.py: PASS \(smoke run, exit 0\)\n\$ python3 organize\.py/);
  });

  it('fails on a non-zero exit and shows the real error', async () => {
    write('crash.py', '"""Crashes."""\nraise SystemExit("cannot organize: " + str(1 / 0))\n');
    const result = await runTests(workspace, 'crash.py', options);
    expect(result).toMatchObject({ ok: false, mode: 'smoke', exitCode: 1 });
    expect(result.output).toContain('ZeroDivisionError');
  });

  it('fails a script that never ends', async () => {
    write('forever.py', 'while True:\n    pass\n');
    const result = await runTests(workspace, 'forever.py', { ...options, timeoutMs: 300 });
    expect(result.ok).toBe(false);
    expect(result.output).toMatch(/timed out/);
  });

  it('runs JavaScript and transpiles TypeScript when Node cannot strip types', async () => {
    write('list.mjs', "// Lists argv[1].\nimport fs from 'node:fs';\nconsole.log(fs.readdirSync(process.argv[2]).join(','));\n");
    const js = await runTests(workspace, 'list.mjs', options);
    expect(js).toMatchObject({ ok: true, mode: 'smoke' });
    expect(js.output).toContain('a.txt,b.jpg,c.pdf,d.py');
    write('count.ts', "// Counts.\nimport fs from 'node:fs';\nconst n: number = fs.readdirSync(process.argv[2]!).length;\nconsole.log(`n=${n}`);\n");
    const typed = await runTests(workspace, 'count.ts', options);
    expect(typed).toMatchObject({ ok: true, mode: 'smoke' });
    expect(typed.output).toContain('n=');
  });
});

describe('runTests with engineer-written tests', () => {
  it('runs unittest discover and passes on success', async () => {
    write('calc.py', '"""Calc."""\n\ndef add(a, b):\n    """Add."""\n    return a + b\n');
    write('test_calc.py', 'import unittest\nfrom calc import add\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 2), 4)\n');
    const result = await runTests(workspace, 'calc.py', options);
    expect(result).toMatchObject({ ok: true, mode: 'unittest', exitCode: 0 });
    expect(result.command).toContain("-m unittest discover -s");
    expect(result.output).toContain('test_add');
    expect(fs.existsSync(path.join(workspace, '__pycache__'))).toBe(false);
  });

  it('fails when a unittest fails, also for *_test.py files', async () => {
    write('calc.py', '"""Calc."""\n\ndef add(a, b):\n    """Add."""\n    return a - b\n');
    write('calc_test.py', 'import unittest\nfrom calc import add\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 2), 4)\n');
    const result = await runTests(workspace, 'calc.py', options);
    expect(result).toMatchObject({ ok: false, mode: 'unittest', exitCode: 1 });
    expect(result.command).toContain("-p '*_test.py'");
    expect(result.output).toContain('AssertionError');
  });

  it('runs node --test for JavaScript tests', async () => {
    write('sum.mjs', '// Sum.\nexport const sum = (a, b) => a + b;\n');
    write('sum.test.mjs', "import test from 'node:test';\nimport assert from 'node:assert';\nimport { sum } from './sum.mjs';\ntest('sum', () => assert.equal(sum(1, 2), 3));\n");
    const pass = await runTests(workspace, 'sum.mjs', options);
    expect(pass).toMatchObject({ ok: true, mode: 'node-test', exitCode: 0, command: 'node --test sum.test.mjs' });
    write('sum.mjs', '// Sum.\nexport const sum = (a, b) => a - b;\n');
    const fail = await runTests(workspace, 'sum.mjs', options);
    expect(fail).toMatchObject({ ok: false, mode: 'node-test', exitCode: 1 });
  });

  it('says clearly when TypeScript tests cannot run on this Node', async () => {
    if (process.allowedNodeEnvironmentFlags.has('--experimental-strip-types')) return;
    write('sum.ts', '// Sum.\nexport const sum = (a: number, b: number) => a + b;\n');
    write('sum.test.ts', "import test from 'node:test';\ntest('x', () => {});\n");
    const result = await runTests(workspace, 'sum.ts', options);
    expect(result).toMatchObject({ ok: false, mode: 'node-test' });
    expect(result.output).toMatch(/cannot run sum\.test\.ts: Node v\d+.* has no --experimental-strip-types/);
  });
});

describe('runTests errors', () => {
  it('throws ENOENT for a missing file and refuses escapes', async () => {
    await expect(runTests(workspace, 'missing.py', options)).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(runTests(workspace, '../x.py', options)).rejects.toMatchObject({ code: 'PATH_ESCAPE' });
  });
});

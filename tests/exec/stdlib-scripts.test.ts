import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyzeComplexity } from '../../src/core/exec/complexity.js';
import { lintFile } from '../../src/core/exec/lint.js';
import { runProcess } from '../../src/core/exec/process.js';
import { pythonProgram } from '../../src/core/exec/python.js';
import { PYTHON_ORGANIZER } from './fixtures.js';

/**
 * A python environment whose site-packages hold a `.pth` start-up hook that ends the interpreter
 * (exit 7) at every start with `site`: the linter's check and the complexity count, which need only
 * the standard library, must not run it; the agents' code keeps its environment, hooks and all.
 * Each test file has its own module state, so this file's pythonProgram() is the virtualenv's.
 */
let root: string;
let savedPath: string | undefined;

beforeAll(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-stdlib-'));
  const venv = path.join(root, 'venv');
  execFileSync('python3', ['-m', 'venv', '--without-pip', venv]);
  const sitePackages = execFileSync(path.join(venv, 'bin', 'python3'), ['-c', 'import site; print(site.getsitepackages()[0])'], { encoding: 'utf8' }).trim();
  fs.writeFileSync(path.join(sitePackages, 'zz-start-up-hook.pth'), 'import os; os._exit(7)\n');
  savedPath = process.env.PATH;
  process.env.PATH = `${path.join(venv, 'bin')}${path.delimiter}${process.env.PATH ?? ''}`;
  fs.mkdirSync(path.join(root, 'ws'));
  fs.writeFileSync(path.join(root, 'ws', 'organize.py'), PYTHON_ORGANIZER);
});

afterAll(() => {
  process.env.PATH = savedPath;
  fs.rmSync(root, { recursive: true, force: true });
});

describe("autoteam's own python scripts", () => {
  it('run without site: a start-up hook in site-packages that ends every other start does not run', async () => {
    const workspace = path.join(root, 'ws');
    expect(await pythonProgram()).toBe(path.join(root, 'venv', 'bin', 'python3'));
    // The agents' code runs with site, so its packages (and this hook) are there.
    const code = await runProcess('python3', ['-c', 'print("ran")'], { cwd: workspace, timeoutMs: 20_000, maxOutputChars: 10_000 });
    expect(code.exitCode).toBe(7);
    expect(code.stdout).toBe('');

    const lint = await lintFile(workspace, 'organize.py');
    expect(lint).toEqual({ file: 'organize.py', language: 'python', problems: [], ok: true });
    const complexity = await analyzeComplexity(workspace, 'organize.py');
    expect(complexity.language).toBe('python');
    expect(complexity.functions.map((fn) => fn.name)).toContain('organize');
  });
});

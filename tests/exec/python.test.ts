import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runProcess } from '../../src/core/exec/process.js';
import { DEFAULT_LIMITS, Sandbox } from '../../src/core/exec/sandbox.js';
import { pathWithPython, pythonProgram } from '../../src/core/exec/python.js';

describe('the python3 the tools run', () => {
  it('is the interpreter PATH picks, by its own path, and runProcess starts that one for python3', async () => {
    const program = await pythonProgram();
    expect(path.isAbsolute(program)).toBe(true);
    expect(fs.existsSync(program)).toBe(true);
    // The same interpreter as PATH's python3 (through any shim it has).
    const viaPath = execFileSync('python3', ['-c', 'import sys; print(sys.version, sys.prefix)'], { encoding: 'utf8' });
    expect(execFileSync(program, ['-c', 'import sys; print(sys.version, sys.prefix)'], { encoding: 'utf8' })).toBe(viaPath);
    const result = await runProcess('python3', ['-c', 'import sys; print(sys.executable)'], { cwd: os.tmpdir(), timeoutMs: 20_000, maxOutputChars: 10_000 });
    expect(result.exitCode).toBe(0);
    expect(result.stdout.trim()).toBe(program);
    // Asked once per process.
    expect(pythonProgram()).toBe(pythonProgram());
  });

  it("puts the interpreter's folder first on PATH only where PATH does not list it", () => {
    expect(pathWithPython('/home/me/.pyenv/shims:/usr/bin:/bin', '/home/me/.pyenv/versions/3.12.1/bin/python3')).toBe('/home/me/.pyenv/versions/3.12.1/bin:/home/me/.pyenv/shims:/usr/bin:/bin');
    // A system or virtualenv python already on PATH: nothing moves (no folder jumps ahead of another's tools).
    expect(pathWithPython('/usr/local/bin:/usr/bin:/bin', '/usr/bin/python3')).toBe('/usr/local/bin:/usr/bin:/bin');
    expect(pathWithPython('/work/.venv/bin/:/usr/bin', '/work/.venv/bin/python3')).toBe('/work/.venv/bin/:/usr/bin');
    // Not found: PATH as it was.
    expect(pathWithPython('/usr/bin:/bin', 'python3')).toBe('/usr/bin:/bin');
  });

  it('is the python3 that code started by a tool reaches too, in the sandbox and out of it', async () => {
    const program = await pythonProgram();
    const workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-python-'));
    try {
      const sandbox = new Sandbox({ workspace, hidden: [], network: false, limits: DEFAULT_LIMITS });
      for (const options of [{}, { sandbox }]) {
        const result = await runProcess('bash', ['-c', 'python3 -c "import sys; print(sys.executable)"'], { cwd: workspace, timeoutMs: 20_000, maxOutputChars: 10_000, ...options });
        expect(result.stderr).toBe('');
        expect(result.stdout.trim()).toBe(program);
      }
    } finally {
      fs.rmSync(workspace, { recursive: true, force: true });
    }
  });
});

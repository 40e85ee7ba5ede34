import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runProcess } from '../../src/core/exec/process.js';
import { pythonProgram } from '../../src/core/exec/python.js';

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
});

/**
 * The python3 the tools run, found once per process. A version manager's `python3` is often a shim
 * (pyenv's is a bash script) that costs about 300 ms of CPU at every start; the interpreter it
 * picks, started directly, takes about 40. A virtualenv's python keeps its own path, so it stays a
 * virtualenv. Where the question fails, plain `python3` is run as before.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { childEnv } from './env.js';

let found: Promise<string> | null = null;

export function pythonProgram(): Promise<string> {
  found ??= new Promise((resolve) => {
    execFile('python3', ['-I', '-c', 'import sys; print(sys.executable)'], { env: childEnv(), timeout: 15_000 }, (error, stdout) => {
      const executable = String(stdout ?? '').trim();
      resolve(!error && path.isAbsolute(executable) && fs.existsSync(executable) ? executable : 'python3');
    });
  });
  return found;
}

/**
 * The python3 the tools run, found once per process. A version manager's `python3` is often a shim
 * (pyenv's is a bash script) that costs about 300 ms of CPU at every start; the interpreter it
 * picks, started directly, takes about 40. A virtualenv's python keeps its own path, so it stays a
 * virtualenv. Where the question fails, plain `python3` is run as before.
 *
 * The code a process runs may start `python3` itself (`python3 app.py` in bash, a check's
 * subprocess): `pathWithPython` puts the interpreter's own folder first on that process's PATH when
 * PATH does not list it already, so those starts skip the shim too and reach the same interpreter.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { childEnv } from './env.js';

/**
 * The flags for a script of autoteam's own that needs only the standard library (the linter's
 * check, the complexity count): `-I` so a module of the workspace (a `json.py`, an `ast.py`) never
 * shadows one it imports, `-S` so no `site` runs — no site-packages, none of their `.pth` start-up
 * hooks. Such a hook imports whatever it likes at every start (one seen here imports certifi), and
 * cost each run of the two checks about 40 ms of CPU, half of their time.
 */
export const STDLIB_ONLY = ['-I', '-S'] as const;

let found: Promise<string> | null = null;

export function pythonProgram(): Promise<string> {
  found ??= new Promise((resolve) => {
    execFile('python3', [...STDLIB_ONLY, '-c', 'import sys; print(sys.executable)'], { env: childEnv(), timeout: 15_000 }, (error, stdout) => {
      const executable = String(stdout ?? '').trim();
      resolve(!error && path.isAbsolute(executable) && fs.existsSync(executable) ? executable : 'python3');
    });
  });
  return found;
}

/**
 * `pathEnv` with the folder of `program` (pythonProgram's answer) first, unless it is already on it
 * (a system or virtualenv python: nothing changes) or `program` is the bare name.
 */
export function pathWithPython(pathEnv: string, program: string): string {
  if (!path.isAbsolute(program)) return pathEnv;
  const folder = path.dirname(program);
  const entries = pathEnv.split(path.delimiter).filter(Boolean);
  return entries.some((entry) => path.resolve(entry) === folder) ? pathEnv : [folder, ...entries].join(path.delimiter);
}

/**
 * PATH for the test processes and everything they start, with the folder of the real python3 in
 * front. A version manager's shim on PATH (pyenv's is a bash script that runs a dozen processes to
 * pick the version) costs over half a CPU-second per start, and a pipeline of the offline team starts
 * python3 some fifteen times (linter, tests, complexity, checks, the engineer's try-out); the
 * interpreter is the one the shim would pick. Without python3, PATH is left as it is.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';

export function pathWithRealPython(pathEnv = process.env.PATH ?? ''): string {
  const found = spawnSync('python3', ['-c', 'import os, sys; print(os.path.dirname(sys.executable))'], { encoding: 'utf8', env: process.env });
  const dir = found.status === 0 ? found.stdout.trim() : '';
  if (!path.isAbsolute(dir)) return pathEnv;
  const entries = pathEnv.split(path.delimiter).filter((entry) => entry !== dir);
  return [dir, ...entries].join(path.delimiter);
}

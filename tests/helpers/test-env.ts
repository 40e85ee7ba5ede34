/**
 * The environment vitest.config.ts gives the test processes (and so everything they start). Both
 * parts only make the suite faster; what runs is the same.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/**
 * PATH with the folder of the real python3 in front. A version manager's shim on PATH (pyenv's is a
 * bash script that runs a dozen processes to pick the version) costs over half a CPU-second per
 * start, and a pipeline of the offline team starts python3 some fifteen times (linter, tests,
 * complexity, checks, the engineer's try-out); the interpreter is the one the shim would pick.
 * Without python3, PATH is left as it is.
 */
export function pathWithRealPython(pathEnv = process.env.PATH ?? ''): string {
  const found = spawnSync('python3', ['-c', 'import os, sys; print(os.path.dirname(sys.executable))'], { encoding: 'utf8' });
  const dir = found.status === 0 ? found.stdout.trim() : '';
  if (!path.isAbsolute(dir)) return pathEnv;
  const entries = pathEnv.split(path.delimiter).filter((entry) => entry !== dir);
  return [dir, ...entries].join(path.delimiter);
}

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(full) : fs.statSync(full).mtimeMs);
  }
  return newest;
}

/**
 * The built teammate worker (dist/worker/teammate-worker.js) when dist/ was built after the last
 * change under src/ — `npm test` builds first — else null. The tests' teammate threads then run it
 * (AUTOTEAM_TEST_WORKER, read by TeammateManager) instead of the sources through tsx, whose loader
 * makes a thread start three times slower.
 */
export function builtWorker(repo: string): string | null {
  const worker = path.join(repo, 'dist', 'worker', 'teammate-worker.js');
  if (!fs.existsSync(worker)) return null;
  return newestMtime(path.join(repo, 'src')) <= fs.statSync(worker).mtimeMs ? worker : null;
}

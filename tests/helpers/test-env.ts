/**
 * The environment vitest.config.ts gives the test processes (and so everything they start). Both
 * parts only make the suite faster; what runs is the same.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

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
 * The built teammate worker (dist/worker/bundle/teammate-worker.js, what production runs) when dist/ was built after the last
 * change under src/ — `npm test` builds first — else null. The tests' teammate threads then run it
 * (AUTOTEAM_TEST_WORKER, read by TeammateManager) instead of the sources through tsx, whose loader
 * makes a thread start three times slower.
 */
export function builtWorker(repo: string): string | null {
  const worker = path.join(repo, 'dist', 'worker', 'bundle', 'teammate-worker.js');
  if (!fs.existsSync(worker)) return null;
  return newestMtime(path.join(repo, 'src')) <= fs.statSync(worker).mtimeMs ? worker : null;
}

/** The fake models the tests hand to worker threads (`{ kind: 'module', path }`), by the variable that names their JS. */
const THREAD_MODELS = { AUTOTEAM_TEST_FAKE_MODEL: 'fake-model', AUTOTEAM_TEST_PIPELINE_MODELS: 'pipeline-models' } as const;

/**
 * Those fake models compiled to JavaScript in `cache`, by variable: a thread whose model is JS needs
 * no tsx loader either (see builtWorker). They import nothing of src/ at run time, so stripping their
 * types is the whole compilation. Written atomically: other copies of the suite may write them too.
 */
export function threadModels(repo: string, cache: string): Record<string, string> {
  fs.mkdirSync(cache, { recursive: true });
  const paths: Record<string, string> = {};
  for (const [variable, name] of Object.entries(THREAD_MODELS)) {
    const source = fs.readFileSync(path.join(repo, 'tests', 'helpers', `${name}.ts`), 'utf8');
    const { outputText } = ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } });
    const file = path.join(cache, `${name}.mjs`);
    const temp = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(temp, outputText);
    fs.renameSync(temp, file);
    paths[variable] = file;
  }
  return paths;
}

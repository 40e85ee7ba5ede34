/**
 * The teammate thread's build (scripts/build-worker.mjs): a bundle that stands alone in
 * dist/worker/bundle, so every thread compiles one module and the chunks it needs rather than some
 * 300 files. What would undo that: an import reaching back into dist/ or node_modules beyond the
 * packages left out on purpose, or a part loaded only when needed (a provider's SDK, execa) pulled
 * into what every thread loads at its start. Read from esbuild's own account of the build.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { isBuiltin } from 'node:module';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { builtWorker } from '../helpers/test-env.js';
import { bundleMeta, holding, loadedAtStart } from '../helpers/bundle-meta.js';

const repo = path.resolve(import.meta.dirname, '..', '..');
const entry = builtWorker(repo);
/** The packages left out of the bundle, loaded from node_modules when needed. */
const LEFT_OUT = /^(typescript|pg|pg-native|@opentelemetry\/[a-z-]+)$/;

describe.runIf(entry)('the teammate worker bundle', () => {
  const { meta, outputs } = bundleMeta(repo, 'worker');

  it('is what the tests run, made from the compiled worker, beside its chunks', () => {
    expect(path.relative(repo, entry!)).toBe(path.join('dist', 'worker', 'bundle', 'teammate-worker.js'));
    expect(meta.outputs[path.relative(repo, entry!)]?.entryPoint).toBe('dist/worker/teammate-worker.js');
    for (const [file] of outputs) expect(fs.existsSync(path.resolve(repo, file)), file).toBe(true);
  });

  it('imports from outside itself only Node and the packages left out of it', () => {
    const outside = outputs.flatMap(([, output]) => output.imports.filter((item) => item.external).map((item) => item.path));
    expect(outside.filter((specifier) => !isBuiltin(specifier) && !LEFT_OUT.test(specifier))).toEqual([]);
    expect(outside).toContain('typescript');
  });

  it('loads the provider SDK and execa only in chunks of their own, not with what every thread loads', () => {
    // The files a thread loads at its start.
    const atStart = loadedAtStart(meta, path.relative(repo, entry!));
    for (const pkg of ['@anthropic-ai/sdk', 'execa']) {
      expect(holding(meta, outputs.map(([file]) => file), pkg).length, pkg).toBeGreaterThan(0);
      expect(holding(meta, atStart, pkg), pkg).toEqual([]);
    }
  });

  it('is rebuilt under what runs from it: every file of the bundle is there at every moment of a rebuild', async () => {
    const files = outputs.map(([file]) => path.resolve(repo, file));
    const builtAt = fs.statSync(entry!).mtimeMs;
    const rebuild = spawn(process.execPath, [path.join(repo, 'scripts', 'build-worker.mjs')], { cwd: repo, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    rebuild.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    const exited = new Promise<number | null>((resolve) => rebuild.once('exit', (code) => resolve(code)));
    let done = false;
    void exited.then(() => (done = true));
    // Looked for over and over while the build runs, as a thread starting then would load them.
    const missing = new Set<string>();
    let looks = 0;
    while (!done) {
      for (const file of files) if (!fs.existsSync(file)) missing.add(path.relative(repo, file));
      looks++;
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(await exited, stderr).toBe(0);
    expect(looks).toBeGreaterThan(1);
    expect([...missing]).toEqual([]);
    // A new build was swapped in, and it names the same files (a chunk is named by its content).
    expect(fs.statSync(entry!).mtimeMs).toBeGreaterThan(builtAt);
    const rebuilt = bundleMeta(repo, 'worker').meta;
    expect(Object.keys(rebuilt.outputs).sort()).toEqual(Object.keys(meta.outputs).sort());
    expect(fs.existsSync(path.join(repo, 'dist', 'worker', 'bundle.next'))).toBe(false);
  });
});

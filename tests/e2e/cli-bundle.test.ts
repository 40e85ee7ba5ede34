/**
 * The command's build (scripts/build-cli.mjs): `autoteam` runs dist/cli/bundle/main.js, which loads
 * two dozen files at its start rather than some 500. What would undo that: an import reaching back
 * into dist/ or node_modules beyond the packages left out on purpose, or what only some commands
 * need (the MCP SDK, a provider's SDK) pulled into what every command loads. Read from esbuild's own
 * account of the build; then the bundle run from a copy of the clone elsewhere, which finds
 * autoteam's own files (its version, the teammates' bundle) from wherever it sits.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { isBuiltin } from 'node:module';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { HANG_MS } from '../helpers/agent-wait.js';
import { bundleMeta, holding, loadedAtStart } from '../helpers/bundle-meta.js';
import { cleanEnv, cliEntry, DOWNLOADS_REQUIREMENT, repoRoot, tempBoard } from '../helpers/pipeline-cli.js';

const python = spawnSync('python3', ['--version']).status === 0;

/** The packages left out of the bundle, loaded from node_modules when needed. */
const LEFT_OUT = /^(typescript|pg|pg-native|@opentelemetry\/[a-z-]+|ink|ink-[a-z-]+|react|react\/[a-z-]+|yoga-layout|tsx|esbuild)$/;

describe('the command bundle', () => {
  const { meta, outputs } = bundleMeta(repoRoot, 'cli');
  const entry = path.relative(repoRoot, cliEntry);

  it('is what `autoteam` and the tests run, made from the compiled command, beside its chunks', () => {
    expect(entry).toBe(path.join('dist', 'cli', 'bundle', 'main.js'));
    expect(meta.outputs[entry]?.entryPoint).toBe('dist/cli/main.js');
    for (const [file] of outputs) expect(fs.existsSync(path.resolve(repoRoot, file)), file).toBe(true);
    expect(fs.readFileSync(path.join(repoRoot, 'bin', 'autoteam.js'), 'utf8')).toContain("'../dist/cli/bundle/main.js'");
  });

  it('imports from outside itself only Node and the packages left out of it', () => {
    const outside = outputs.flatMap(([, output]) => output.imports.filter((item) => item.external).map((item) => item.path));
    expect(outside.filter((specifier) => !isBuiltin(specifier) && !LEFT_OUT.test(specifier))).toEqual([]);
  });

  it('loads the MCP SDK and the providers\' SDKs only in chunks of their own, not with what every command loads', () => {
    const atStart = loadedAtStart(meta, entry);
    for (const pkg of ['@modelcontextprotocol/sdk', '@anthropic-ai/sdk', 'openai']) {
      expect(holding(meta, outputs.map(([file]) => file), pkg).length, pkg).toBeGreaterThan(0);
      expect(holding(meta, atStart, pkg), pkg).toEqual([]);
    }
  });

  it.runIf(python)('run from a copy of the clone, finds that copy\'s own files: its version, and its teammates\' bundle for a pipeline', { timeout: 2 * HANG_MS }, () => {
    // The copy's package.json says another version: read from where the bundle sits, not from the source tree.
    const copy = tempBoard('autoteam-copied-');
    try {
      fs.cpSync(path.join(repoRoot, 'dist'), path.join(copy, 'dist'), { recursive: true });
      fs.symlinkSync(path.join(repoRoot, 'node_modules'), path.join(copy, 'node_modules'));
      const manifest = JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as Record<string, unknown>;
      fs.writeFileSync(path.join(copy, 'package.json'), JSON.stringify({ ...manifest, version: '9.9.9' }));
      const main = path.join(copy, 'dist', 'cli', 'bundle', 'main.js');
      const version = spawnSync(process.execPath, [main, '--version'], { encoding: 'utf8', env: cleanEnv() });
      expect(version.status, version.stderr).toBe(0);
      expect(version.stdout.split('\n')[0]).toBe('9.9.9');
      // A run starts the teammates' threads from the copy's bundle, and takes the requirement to approval.
      const board = path.join(copy, 'board');
      fs.mkdirSync(board);
      const run = spawnSync(process.execPath, [main, 'run', '--auto', '--dir', board, DOWNLOADS_REQUIREMENT], { encoding: 'utf8', env: cleanEnv(), timeout: HANG_MS });
      expect(run.status, `${run.stdout}\n${run.stderr}`).toBe(0);
      expect(run.stdout).toMatch(/approved/);
    } finally {
      fs.rmSync(copy, { recursive: true, force: true });
    }
  });
});

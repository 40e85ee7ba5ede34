/**
 * The built command runs as a program, as the README's `npx autoteam …` runs it in a clone: the build
 * leaves dist/cli/main.js executable (tsc writes it 0644), and its #! line starts Node.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { cleanEnv, cliEntry, repoRoot } from '../helpers/pipeline-cli.js';

describe('the built command', () => {
  it('is executable, and runs as itself and as `npx autoteam` in the clone', () => {
    expect(fs.statSync(cliEntry).mode & 0o111).not.toBe(0);
    const direct = spawnSync(cliEntry, ['--version'], { encoding: 'utf8', env: cleanEnv() });
    expect(direct.error).toBeUndefined();
    expect(direct.status, direct.stderr).toBe(0);
    const version = (JSON.parse(fs.readFileSync(`${repoRoot}/package.json`, 'utf8')) as { version: string }).version;
    expect(direct.stdout.split('\n')[0]).toBe(version);
    const npx = spawnSync('npx', ['--no-install', 'autoteam', '--version'], { cwd: repoRoot, encoding: 'utf8', env: cleanEnv() });
    expect(npx.status, npx.stderr).toBe(0);
    expect(npx.stdout.split('\n')[0]).toBe(version);
  });
});

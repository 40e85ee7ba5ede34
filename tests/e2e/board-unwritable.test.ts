/**
 * The board's folder stops taking writes while a teammate works (its permissions changed; made
 * immutable here, which refuses root too): the model is not called again to retry a tool that cannot
 * write — the attempt ends at the first refused write — and `autoteam run` ends with one line and
 * exit 1. Through the built CLI and a loopback Messages API server (root only: chattr +i; skipped with
 * a note otherwise).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MessagesServer, ok, toolUseMessage } from '../helpers/messages-server.js';
import { DOWNLOADS_REQUIREMENT, describeRun, runCli } from '../helpers/pipeline-cli.js';

const chattr = (flag: '+i' | '-i', dir: string) => spawnSync('chattr', [flag, dir]).status === 0;

const canFreeze = process.getuid?.() === 0 && (() => {
  const probe = fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-freeze-'));
  const frozen = chattr('+i', probe);
  if (frozen) chattr('-i', probe);
  fs.rmSync(probe, { recursive: true, force: true });
  return frozen;
})();
if (!canFreeze) console.warn('unwritable-board test skipped: chattr +i needs root and a filesystem that has it');

const roots: string[] = [];
let server: MessagesServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
  for (const root of roots.splice(0)) {
    chattr('-i', path.join(root, '.tasks'));
    fs.rmSync(root, { recursive: true, force: true });
  }
});

describe.runIf(canFreeze)('a board folder that stops taking writes mid-task', () => {
  it('ends the attempt at the first refused write, one model call in all, and the run with one line and exit 1', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-unwritable-'));
    roots.push(root);
    // The analyst's first call: by the time it answers, the task folder takes no more writes.
    server = await MessagesServer.start([
      () => {
        if (!chattr('+i', path.join(root, '.tasks'))) throw new Error('chattr +i failed');
        return ok(toolUseMessage('save_requirement', { key: 'goal', value: 'sort the files by type' }));
      },
    ]);
    const run = await runCli(['run', '--auto', '--dir', root, DOWNLOADS_REQUIREMENT], {
      cwd: root,
      env: { ANTHROPIC_API_KEY: 'sk-test-unwritable', ANTHROPIC_BASE_URL: server.url },
    });
    expect(run.signal, `the run hung and was killed\n${describeRun(run)}`).toBeNull();
    expect(run.code, describeRun(run)).toBe(1);
    expect(`${run.stdout}${run.stderr}`).toMatch(/the board's disk refused a write \(EPERM\)/);
    // Not a second call to retry save_requirement (before, the model was asked again, up to MAX_TURNS).
    expect(server.requests, describeRun(run)).toHaveLength(1);
    expect(server.errors).toEqual([]);
  });
});

const python = spawnSync('python3', ['--version']).status === 0;

describe.runIf(python)('an event log that cannot be written (a folder in its place)', () => {
  it('is said by `run` in one line naming the file (the board the command opened, not the lead\'s own), and the pipeline is still approved', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-unlogged-run-'));
    roots.push(root);
    const log = path.join(root, '.team', 'events.jsonl');
    fs.mkdirSync(log, { recursive: true });
    const run = await runCli(['run', '--auto', '--json', '--dir', root, DOWNLOADS_REQUIREMENT], { cwd: root });
    expect(run.code, describeRun(run)).toBe(0);
    expect(run.stderr.match(/EVENT_LOG/g), describeRun(run)).toHaveLength(1);
    expect(run.stderr).toContain(`${log} cannot be written (EISDIR`);
    expect(JSON.parse(run.stdout)).toMatchObject({ pipeline: 1, status: 'approved' });
  });
});

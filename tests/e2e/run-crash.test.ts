/**
 * `autoteam run` when a teammate thread dies holding work: one line names the crash log (error and
 * stack), the run stops at once instead of waiting out its timeout, and it exits non-zero.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { loadTeammateSettings } from '../../src/core/agent/settings.js';
import { EMPTY_PROJECT_CONFIG } from '../../src/core/config/project-config.js';
import { runHeadless } from '../../src/cli/run-command.js';
import { removeBoard, tempBoard } from '../helpers/agent-wait.js';
import { FAKE_MODEL_PATH } from '../helpers/fake-model.js';

let root = '';
afterEach(() => {
  vi.restoreAllMocks();
  removeBoard(root);
});

describe('autoteam run with a teammate that dies', () => {
  it('stops at once, names the crash log, exits 1 and leaves the pipeline open', async () => {
    root = tempBoard('autoteam-run-crash-');
    const printed: string[] = [];
    vi.spyOn(console, 'log').mockImplementation((line: unknown) => void printed.push(String(line)));
    vi.spyOn(console, 'error').mockImplementation((line: unknown) => void printed.push(String(line)));
    const code = await runHeadless({
      dir: root,
      requirements: ['Write a Python script that organizes my Downloads folder by file type.'],
      auto: true,
      json: false,
      startStage: 'implementation',
      // Ten hours: only the death can end the run within the test's ceiling.
      timeout: '600m',
      settings: { ...loadTeammateSettings({}), pollMs: 200, idleTimeoutMs: 0 },
      project: EMPTY_PROJECT_CONFIG,
      models: {
        model: { kind: 'offline', reason: 'test' },
        models: { engineer: { kind: 'module', path: FAKE_MODEL_PATH, options: { script: 'exit', code: 7 } } },
      },
    });
    const output = printed.join('\n');
    expect(code, output).toBe(1);
    expect(output).not.toMatch(/timed out/);
    const died = /^  \[engineer\] died: thread died \(exit code 7\); handed back #1 — details in (\.team\/crash\/engineer-[\dTZ-]+\.log)$/m.exec(output);
    expect(died, output).not.toBeNull();
    expect(fs.readFileSync(path.join(root, died![1]!), 'utf8')).toMatch(/^engineer \(engineer\) died at /);
    expect(output).toMatch(/pipeline #1: LEFT OPEN — engineer died \(thread died \(exit code 7\)\); details in \.team\/crash\/engineer-.*\.log; pipeline #1 is left open on the board/);
  });
});

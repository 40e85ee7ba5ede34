import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LeadSession } from '../../src/core/lead/session.js';

const roots: string[] = [];
const sessions: LeadSession[] = [];
afterEach(async () => {
  for (const session of sessions.splice(0)) await session.close(1_000).catch(() => undefined);
  for (const root of roots.splice(0)) fs.rmSync(root, { recursive: true, force: true });
});

async function runPipeline(requirement: string) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-offline-'));
  roots.push(root);
  const session = new LeadSession({ rootDir: root, model: { kind: 'offline', reason: 'test' }, auto: true, settings: { pollMs: 200 } });
  sessions.push(session);
  await session.start();
  const first = await session.post(requirement);
  const state = await session.waitForPipeline(first.pipeline!, AbortSignal.timeout(40_000));
  return { root, state, workspace: path.join(root, 'workspace', String(first.pipeline)) };
}

describe('the offline engineer', () => {
  it.each([
    ['Write a Python script that counts the words in a text file.', 'wordcount.py', 'test_wordcount.py', ['python3', 'wordcount.py']],
    ['Write a JavaScript program that counts words and lines in a file.', 'wordcount.mjs', 'wordcount.test.mjs', ['node', 'wordcount.mjs']],
  ])('writes a working word counter with unit tests that the reviewer runs: %s', async (requirement, file, testFile, command) => {
    const { state, workspace } = await runPipeline(requirement);
    expect(state.status).toBe('approved');
    expect(fs.existsSync(path.join(workspace, testFile))).toBe(true);
    const reviews = state.tasks.filter((task) => task.stage === 'review');
    // The reviewer ran the engineer's tests, not a smoke run.
    expect(reviews.at(-1)!.artifacts.tests?.mode).not.toBe('smoke');
    expect(reviews.at(-1)!.artifacts.tests?.ok).toBe(true);
    const sample = path.join(workspace, 'sample.txt');
    fs.writeFileSync(sample, 'alpha beta\ngamma\n');
    const run = spawnSync(command[0]!, [command[1]!, sample], { cwd: workspace, encoding: 'utf8' });
    expect(run.status).toBe(0);
    expect(run.stdout).toContain('lines: 2  words: 3  characters: 17');
    expect(fs.readFileSync(path.join(workspace, file), 'utf8').length).toBeGreaterThan(0);
  }, 60_000);
});

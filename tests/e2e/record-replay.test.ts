/**
 * Record and replay: a run against the loopback Messages API recorded with --record, then replayed
 * with --replay and no provider at all, to the same board; a call the recording lacks fails loudly;
 * and the recording shipped in tests/fixtures replays in CI.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Task } from '../../src/core/board/schemas.js';
import { MessagesServer } from '../helpers/messages-server.js';
import { type CliResult, DOWNLOADS_REQUIREMENT, describeRun, readTasks, repoRoot, runCli, sha256, tempBoard } from '../helpers/pipeline-cli.js';
import { CLEAN_ORGANIZER, TeamPlayer } from '../helpers/pipeline-roles.js';

const KEY = `test-key-${randomBytes(8).toString('hex')}`;
const python = spawnSync('python3', ['--version']).status === 0;
/** Made with `--record` against the loopback Messages API, as the first test here does. */
export const FIXTURE = path.join(repoRoot, 'tests', 'fixtures', 'recording');
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

/** What a board is, for comparing two runs: the tasks' path through the stages and what they decided. */
function story(tasks: readonly Task[]) {
  return tasks.map((t) => ({ id: t.id, stage: t.stage, revision: t.revision, owner: t.owner, status: t.status, verdict: t.artifacts.verdict ?? null, result: t.result }));
}

describe.runIf(python)('--record then --replay', () => {
  let recording = '';
  let recorded: CliResult;
  let first: Task[] = [];
  let firstDir = '';

  beforeAll(async () => {
    const server = await MessagesServer.start(new TeamPlayer().steps());
    firstDir = tempBoard('autoteam-record-');
    recording = tempBoard('autoteam-recording-');
    dirs.push(firstDir, recording);
    try {
      recorded = await runCli(['run', '--auto', '--record', recording, '--dir', firstDir, DOWNLOADS_REQUIREMENT], {
        cwd: firstDir,
        env: { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: server.url },
      });
    } finally {
      await server.close();
    }
    first = fs.existsSync(path.join(firstDir, '.tasks')) ? readTasks(firstDir) : [];
  });

  it('writes one file per call, keyed by role, task, purpose and turn, with no secret in them', () => {
    expect(recorded.code, describeRun(recorded)).toBe(0);
    const files = fs.readdirSync(recording).sort();
    expect(files).toContain('analyst.task-1.work.001.json');
    expect(files).toContain('user.task-1.simulated_user.001.json');
    expect(files.filter((f) => f.startsWith('reviewer.'))).toEqual(['reviewer.task-3.work.001.json', 'reviewer.task-3.work.002.json']);
    for (const file of files) {
      const text = fs.readFileSync(path.join(recording, file), 'utf8');
      expect(text).not.toContain(KEY);
      const call = JSON.parse(text);
      expect(call.key).toBe(file.replace(/\.json$/, ''));
      expect(call.request.messages.length).toBeGreaterThan(0);
      expect(Array.isArray(call.response.content)).toBe(true);
    }
  });

  it('replays to the same board with no provider and no network: same tasks, verdicts and files', async () => {
    const dir = tempBoard('autoteam-replay-');
    dirs.push(dir);
    const replay = await runCli(['run', '--auto', '--replay', recording, '--dir', dir, DOWNLOADS_REQUIREMENT], { cwd: dir });
    expect(replay.code, describeRun(replay)).toBe(0);
    expect(replay.stdout).toMatch(/^autoteam run — replay of /m);
    expect(story(readTasks(dir))).toEqual(story(first));
    expect(sha256(path.join(dir, 'workspace', '1', 'organize.py'))).toBe(sha256(path.join(firstDir, 'workspace', '1', 'organize.py')));
  });

  it('a replay of another requirement stops at the first call, naming both tasks', async () => {
    const dir = tempBoard('autoteam-replay3-');
    dirs.push(dir);
    const replay = await runCli(['run', '--auto', '--replay', recording, '--dir', dir, 'Write a Python script that counts the words in a text file.'], { cwd: dir });
    expect(replay.code).toBe(2);
    expect(`${replay.stdout}${replay.stderr}`).toMatch(/the run's call analyst\.task-1\.work\.001 is about another task than the recording's \(recorded: '#1 Analyse: Write a Python script that organizes.*now: '#1 Analyse: Write a Python script that counts/);
  });

  it('--record at a file, not a folder: one line naming it, exit 2', async () => {
    const dir = tempBoard('autoteam-record-file-');
    dirs.push(dir);
    const file = path.join(dir, 'taken');
    fs.writeFileSync(file, 'x');
    const run = await runCli(['run', '--auto', '--record', file, '--dir', dir, 'Write a Python script that counts the words in a text file.'], { cwd: dir });
    expect(run.code, describeRun(run)).toBe(2);
    expect(run.stderr.trim()).toBe(`autoteam: --record ${file}: a file is in the way (it needs a folder)`);
    expect(fs.readdirSync(dir)).toEqual(['taken']);
  });

  it('--record where no folder can be made (/proc): one line naming the folder, exit 2, at once', async () => {
    const dir = tempBoard('autoteam-record-proc-');
    dirs.push(dir);
    // Node 20's own recursive mkdir never returns there: the run hung at full CPU.
    const run = await runCli(['run', '--auto', '--record', '/proc/autoteam-none/rec', '--dir', dir, 'Write a Python script that counts the words in a text file.'], { cwd: dir });
    expect(run.code, describeRun(run)).toBe(2);
    expect(run.stderr.trim()).toBe('autoteam: --record /proc/autoteam-none/rec: no folder can be made at /proc/autoteam-none (ENOENT)');
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it('a replay on a board that would number its tasks otherwise (the recorded folder, after the recorded run) is refused before it posts anything', async () => {
    const before = readTasks(firstDir).length;
    const replay = await runCli(['run', '--auto', '--replay', recording, '--dir', firstDir, DOWNLOADS_REQUIREMENT], { cwd: firstDir });
    expect(replay.code, describeRun(replay)).toBe(2);
    expect(replay.stderr.trim()).toBe(`autoteam: --replay ${recording}: the recording's first task is #1, and this board's next task would be #${before + 1}: a replay finds each call by its task's number, so run it on a board that numbers the tasks as the recorded one did (an empty folder, with --dir)`);
    expect(readTasks(firstDir)).toHaveLength(before);
  });

  it('a call the recording does not hold stops the run, naming the call', async () => {
    const partial = tempBoard('autoteam-partial-');
    dirs.push(partial);
    for (const file of fs.readdirSync(recording)) if (file !== 'reviewer.task-3.work.002.json') fs.copyFileSync(path.join(recording, file), path.join(partial, file));
    const dir = tempBoard('autoteam-replay2-');
    dirs.push(dir);
    const replay = await runCli(['run', '--auto', '--replay', partial, '--dir', dir, DOWNLOADS_REQUIREMENT], { cwd: dir });
    expect(replay.code).toBe(2);
    expect(`${replay.stdout}${replay.stderr}`).toMatch(/holds no call reviewer\.task-3\.work\.002: the run asked something it does not hold/);
  });
});

describe.runIf(python)('the shipped recording', () => {
  // The default team's replay of a recording is the test above; this one has two engineers.
  it('replays to an approved pipeline with the program the recorded team wrote, also with two engineers: calls are keyed by role, whichever engineer claims', async () => {
    const dir = tempBoard('autoteam-fixture-');
    dirs.push(dir);
    fs.writeFileSync(
      path.join(dir, 'autoteam.config.json'),
      JSON.stringify({ team: [{ name: 'analyst', role: 'analyst' }, { name: 'engineer', role: 'engineer' }, { name: 'engineer2', role: 'engineer' }, { name: 'reviewer', role: 'reviewer' }] }),
    );
    const replay = await runCli(['run', '--auto', '--replay', FIXTURE, '--dir', dir, DOWNLOADS_REQUIREMENT], { cwd: dir });
    expect(replay.code, describeRun(replay)).toBe(0);
    expect(replay.stdout).toMatch(/pipeline #1: APPROVED/);
    expect(fs.readFileSync(path.join(dir, 'workspace', '1', 'organize.py'), 'utf8')).toBe(CLEAN_ORGANIZER);
    expect(story(readTasks(dir)).map((t) => `${t.stage}/${t.owner}/${t.status}`)).toEqual([
      'requirements/analyst/completed',
      expect.stringMatching(/^implementation\/engineer2?\/completed$/),
      'review/reviewer/completed',
    ]);
  });
});

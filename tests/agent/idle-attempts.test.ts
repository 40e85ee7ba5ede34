/**
 * A model that answers every claimed task with `idle` is not a cost storm: each release is an
 * unfinished attempt that backs the task off for every claimer, and after MAX_ATTEMPTS the task fails
 * with "no teammate finished it" and the lead is told. Through the built CLI (`autoteam worker`, a
 * process of its own) and a loopback Messages API server that always answers `idle`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Mailbox } from '../../src/core/board/mailbox.js';
import { TaskBoard } from '../../src/core/board/task-board.js';
import { makeTeam } from '../helpers/agent-team.js';
import { removeBoard, tempBoard, until } from '../helpers/agent-wait.js';
import { MessagesServer, ok, type ScriptStep, toolUseMessage } from '../helpers/messages-server.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const CLI = path.join(here, '..', '..', 'dist', 'cli', 'bundle', 'main.js');
const ATTEMPTS = 3;

const alwaysIdle: ScriptStep = () => ok(toolUseMessage('idle', { reason: 'nothing I can do here' }));

describe('a model that always answers idle (autoteam worker, loopback Messages API)', () => {
  let root = '';
  let server: MessagesServer | null = null;
  let worker: ChildProcess | null = null;
  let output = '';

  beforeAll(() => {
    if (!fs.existsSync(CLI)) throw new Error(`${CLI} is missing: build first with 'npm run build'`);
  });

  afterEach(async () => {
    if (worker && worker.exitCode === null && worker.signalCode === null) {
      const exited = new Promise((resolve) => worker!.once('exit', resolve));
      worker.kill('SIGKILL');
      await exited;
    }
    worker = null;
    await server?.close();
    server = null;
    removeBoard(root);
  });

  it('makes one model call per attempt, backs off between them, then fails the task and tells the lead', async () => {
    root = tempBoard();
    await makeTeam(root);
    // The hand-written task of the report: only a subject, no role, no stage.
    fs.mkdirSync(path.join(root, '.tasks'), { recursive: true });
    fs.writeFileSync(path.join(root, '.tasks', 'task_1.json'), JSON.stringify({ subject: 'Summarize what this project does in one paragraph' }));
    server = await MessagesServer.start(Array.from({ length: 40 }, () => alwaysIdle));
    output = '';
    worker = spawn(process.execPath, [CLI, 'worker', '--role', 'engineer', '--name', 'eng', '--dir', root], {
      cwd: root,
      env: {
        PATH: process.env.PATH,
        ANTHROPIC_API_KEY: 'sk-test-idle',
        ANTHROPIC_BASE_URL: server.url,
        MAX_ATTEMPTS: String(ATTEMPTS),
        RETRY_BACKOFF: '150ms',
        POLL_INTERVAL: '100ms',
        IDLE_TIMEOUT: '0',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    worker.stdout!.on('data', (chunk) => (output += String(chunk)));
    worker.stderr!.on('data', (chunk) => (output += String(chunk)));

    const board = new TaskBoard(root);
    const failed = await until(
      () => {
        const task = board.get(1);
        return task.status === 'failed' ? task : null;
      },
      'the task to fail',
    ).catch((error: Error) => {
      throw new Error(`${error.message}\nmodel calls: ${server!.requests.length}\nworker output:\n${output}`);
    });

    // One model call per attempt: the release never led to an immediate re-claim.
    expect(server.requests).toHaveLength(ATTEMPTS);
    expect(server.errors).toEqual([]);
    expect(failed.claims).toBe(ATTEMPTS);
    expect(failed.result).toBe(`no teammate finished it: went idle: nothing I can do here (attempt ${ATTEMPTS} of ${ATTEMPTS}, MAX_ATTEMPTS)`);
    const events = failed.history.map((entry) => entry.event);
    expect(events).toEqual(['claimed', 'retry_later', 'claimed', 'retry_later', 'claimed', 'failed']);
    // Each retry waited out its backoff: the next claim came no sooner than the recorded not-before.
    const retries = failed.history.filter((entry) => entry.event === 'retry_later');
    const claims = failed.history.filter((entry) => entry.event === 'claimed');
    for (const [i, retry] of retries.entries()) {
      const notBefore = Date.parse(/not before (\S+)$/.exec(retry.detail ?? '')![1]!);
      expect(Date.parse(claims[i + 1]!.at)).toBeGreaterThanOrEqual(notBefore);
    }
    // The lead is told, in its inbox (the message follows the task's write).
    const lead = new Mailbox(root);
    await until(() => lead.peek('lead').some((m) => m.content === `Task #1 failed: ${failed.result}`), 'the lead to be told');
    expect(output).toMatch(/released #1 unfinished \(went idle: nothing I can do here\); attempt 1 of 3/);
  });
});

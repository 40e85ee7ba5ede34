/**
 * A task whose model call keeps failing (the endpoint answers every call with the same error) is not
 * a retry storm: it backs off, unclaimable by anyone, and fails after MAX_ATTEMPTS with the last error.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Teammate } from '../../src/core/agent/teammate.js';
import { Wake } from '../../src/core/agent/wake.js';
import { Mailbox } from '../../src/core/board/mailbox.js';
import { TaskBoard } from '../../src/core/board/task-board.js';
import { ModelError } from '../../src/core/errors.js';
import type { ModelClient, ModelRequest, ModelResponse } from '../../src/core/model/types.js';
import { Pipeline } from '../../src/core/stages/pipeline.js';
import { until } from '../helpers/agent-wait.js';

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) fs.rmSync(root, { recursive: true, force: true });
});

/** Answers every call with the same 400, and remembers when each call came. */
class RejectingModel implements ModelClient {
  readonly id = 'rejecting';
  readonly label = 'rejecting model';
  readonly calls: number[] = [];
  async create(_request: ModelRequest): Promise<ModelResponse> {
    this.calls.push(Date.now());
    throw new ModelError('400 invalid_request_error: prompt is too long: 1048576 tokens > 200000 maximum', 'MODEL_BAD_REQUEST');
  }
}

async function setup() {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-backoff-'));
  roots.push(root);
  const mailbox = new Mailbox(root);
  await mailbox.registry.ensure('test');
  const board = new TaskBoard(root);
  return { root, board, pipeline: new Pipeline(board, mailbox) };
}

function teammate(root: string, model: ModelClient, signal: AbortSignal, name = 'engineer') {
  return new Teammate({
    name,
    role: 'engineer',
    rootDir: root,
    model,
    wake: new Wake(),
    signal,
    settings: { pollMs: 20, idleTimeoutMs: 0, maxAttempts: 3, retryBaseMs: 200, retryMaxMs: 400 },
  });
}

describe('failed attempts back off and are capped', () => {
  it('calls the model once per attempt, waits out the backoff each time, then fails the task with the last error', async () => {
    const { root, board, pipeline } = await setup();
    await pipeline.post('Write a greeting program.', { startStage: 'implementation' });
    const model = new RejectingModel();
    const stop = new AbortController();
    const running = teammate(root, model, stop.signal).run();
    await until(() => board.get(1).status === 'failed', 'the task to fail');
    stop.abort();
    await running;

    expect(model.calls).toHaveLength(3);
    const task = board.get(1);
    expect(task.status).toBe('failed');
    // Woken by its own release it still could not claim: each call came no sooner than the
    // not-before its failed attempt recorded (the backoff), not in a storm.
    const notBefore = task.history.filter((entry) => entry.event === 'retry_later').map((entry) => Date.parse(/not before (\S+)$/.exec(entry.detail ?? '')![1]!));
    expect(notBefore).toHaveLength(2);
    expect(notBefore[0]).toBeGreaterThan(model.calls[0]!);
    expect(model.calls[1]).toBeGreaterThanOrEqual(notBefore[0]!);
    expect(model.calls[2]).toBeGreaterThanOrEqual(notBefore[1]!);
    expect(task.result).toBe(
      'gave up after 3 failed attempts (MAX_ATTEMPTS 3); last error: 400 invalid_request_error: prompt is too long: 1048576 tokens > 200000 maximum',
    );
    expect(task.attempts).toBe(2);
    expect(task.history.filter((entry) => entry.event === 'retry_later').map((entry) => entry.detail)).toEqual([
      expect.stringMatching(/^attempt 1 failed: 400 invalid_request_error: prompt is too long.*; not before \d{4}-/),
      expect.stringMatching(/^attempt 2 failed: /),
    ]);
    expect(pipeline.state(1)).toMatchObject({ status: 'failed' });
  });

  it('a task for a stage the config does not have (written by hand) backs off and fails, with no model call and no lease held', async () => {
    const { root, board } = await setup();
    const task = await board.create({ subject: 'create a task to run `echo hi`', stage: 'nosuchstage' });
    const model = new RejectingModel();
    const stop = new AbortController();
    const running = teammate(root, model, stop.signal).run();
    await until(() => board.get(task.id).status === 'failed', 'the task to fail');
    stop.abort();
    await running;
    expect(model.calls).toEqual([]);
    const failed = board.get(task.id);
    expect(failed.result).toBe(
      `gave up after 3 failed attempts (MAX_ATTEMPTS 3); last error: task #${task.id} is for stage 'nosuchstage', which this team's config does not have (stages: requirements, implementation, review): written by hand, or by a host with another autoteam.config.json`,
    );
    // Each attempt handed back at once and backed off, never a lease run out and taken over.
    expect(failed.history.filter((entry) => entry.event === 'retry_later')).toHaveLength(2);
    expect(failed.history.some((entry) => /taken over/.test(entry.detail ?? ''))).toBe(false);
  });

  it('an endpoint that asks for no request for an hour (a rate limit) gets its hour: the task waits that long, not the backoff', async () => {
    const { root, board, pipeline } = await setup();
    await pipeline.post('Write a greeting program.', { startStage: 'implementation' });
    const calls: number[] = [];
    const limited: ModelClient = {
      id: 'limited',
      label: 'rate-limited model',
      async create() {
        calls.push(Date.now());
        throw new ModelError('429 rate_limit_error, and asks for no request for 60 min (retry-after)', 'MODEL_ERROR', { retryAfterMs: 3_600_000 });
      },
    };
    const stop = new AbortController();
    const running = teammate(root, limited, stop.signal).run();
    await until(() => board.get(1).attempts === 1, 'the first attempt to be released');
    const retried = board.get(1).history.find((entry) => entry.event === 'retry_later')!;
    const notBefore = Date.parse(/not before (\S+)$/.exec(retried.detail ?? '')![1]!);
    expect(notBefore - calls[0]!).toBeGreaterThanOrEqual(3_600_000 - 1_000);
    expect(board.scanUnclaimed('engineer')).toEqual([]);
    stop.abort();
    await running;
    expect(calls).toHaveLength(1);
  });

  it('a backing-off task is claimable by no one until its time has come', async () => {
    const { root, board, pipeline } = await setup();
    const task = await pipeline.post('Write a greeting program.', { startStage: 'implementation' });
    const claim = await board.claim(task.id, 'eng1');
    if (!claim.ok) throw new Error(claim.reason);
    const retryAt = new Date(Date.now() + 60_000);
    await board.retryLater(task.id, { owner: 'eng1', token: claim.task.claims }, 'boom', retryAt);
    expect(board.scanUnclaimed('engineer')).toEqual([]);
    expect(await board.claimNext('eng2', 'engineer')).toBeNull();
    const direct = await board.claim(task.id, 'eng2');
    expect(direct).toMatchObject({ ok: false, reason: `task #1 is backing off until ${retryAt.toISOString()}` });
    const later = new TaskBoard(root, { now: () => new Date(retryAt.getTime() + 1) });
    expect(later.scanUnclaimed('engineer').map((t) => t.id)).toEqual([1]);
    expect(await later.claim(task.id, 'eng2')).toMatchObject({ ok: true, task: { owner: 'eng2', attempts: 1 } });
  });
});

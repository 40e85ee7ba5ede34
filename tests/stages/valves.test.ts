/**
 * Safety valves, end to end in-process: a LeadSession with real worker threads whose model is a
 * `{kind: 'module'}` fake (tests/helpers/pipeline-models.ts) that misbehaves on purpose. Each valve
 * must end the pipeline as failed with its reason on the board, and the lead must be told.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { loadTeammateSettings, type TeammateSettings } from '../../src/core/agent/settings.js';
import type { Stage } from '../../src/core/board/schemas.js';
import { type LeadEvent, LeadSession } from '../../src/core/lead/session.js';
import type { ToolResultBlock } from '../../src/core/model/types.js';
import type { PipelineState } from '../../src/core/stages/pipeline.js';
import { type FakeTeamOptions, NUDGE, readLog } from '../helpers/pipeline-models.js';
import { HANG_MS } from '../helpers/agent-wait.js';

// As JavaScript when vitest.config.ts compiled it: the teammate threads then need no tsx.
const modelsFile = process.env.AUTOTEAM_TEST_PIPELINE_MODELS ?? path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'helpers', 'pipeline-models.ts');

interface ValveRun {
  root: string;
  state: PipelineState;
  events: LeadEvent[];
  log: ReturnType<typeof readLog>;
}

const sessions: LeadSession[] = [];
const roots: string[] = [];
afterEach(async () => {
  for (const session of sessions.splice(0)) {
    // close() never throws: every step runs even when one fails, so no thread outlives the test.
    await session.close(2_000);
  }
  for (const root of roots.splice(0)) fs.rmSync(root, { recursive: true, force: true });
});

async function runValve(
  team: FakeTeamOptions,
  settings: Partial<TeammateSettings> = {},
  startStage?: Stage,
): Promise<ValveRun> {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-valve-')));
  roots.push(root);
  const log = path.join(root, 'model-calls.jsonl');
  const session = new LeadSession({
    rootDir: root,
    model: { kind: 'module', path: modelsFile, options: { ...team, log } },
    settings: { pollMs: 500, idleTimeoutMs: 0, ...settings },
    auto: true,
    reconcileMs: 250,
  });
  sessions.push(session);
  const events: LeadEvent[] = [];
  session.on('event', (event) => events.push(event));
  const ready = teamReady(session);
  await session.start();
  // Post only once every teammate has joined: see 'close() right after start' below for why.
  await ready;
  const first = await session.post('Write a greeting program.', startStage);
  const state = await session.waitForPipeline(first.pipeline!, AbortSignal.timeout(HANG_MS));
  await session.close(HANG_MS);
  sessions.splice(sessions.indexOf(session), 1);
  return { root, state: session.stateOf(first.pipeline!), events, log: readLog(log) };
}

/** Resolves when analyst, engineer and reviewer have each reported themselves idle (joined and looking for work). */
function teamReady(session: LeadSession): Promise<void> {
  const waiting = new Set(['analyst', 'engineer', 'reviewer']);
  return new Promise((resolve) => {
    const onEvent = (event: LeadEvent) => {
      if (event.type === 'teammate' && event.event.type === 'status' && event.event.status === 'idle') waiting.delete(event.event.name);
      if (waiting.size === 0) {
        session.off('event', onEvent);
        resolve();
      }
    };
    session.on('event', onEvent);
  });
}

function failureNotice(run: ValveRun): string | undefined {
  const event = run.events.find((e) => e.type === 'pipeline' && e.status === 'failed');
  return event?.type === 'pipeline' ? event.content : undefined;
}

describe('safety valves', () => {
  it('a model that keeps asking: 8 questions answered (the default), then the pipeline fails with the max-questions reason', async () => {
    const run = await runValve({ requirements: 'always-ask' });
    expect(run.state.status).toBe('failed');
    expect(run.state.reason).toBe('max clarifying questions (8) exceeded');
    const [task] = run.state.tasks;
    expect(run.state.tasks).toHaveLength(1);
    expect(task).toMatchObject({ stage: 'requirements', status: 'failed', owner: 'analyst', result: 'max clarifying questions (8) exceeded' });
    expect((task!.artifacts.qa as unknown[]).length).toBe(8);
    const events = task!.history.map((entry) => entry.event);
    expect(events.filter((e) => e === 'asked')).toHaveLength(8);
    expect(events.filter((e) => e === 'answered')).toHaveLength(8);
    expect(events.filter((e) => e === 'question_refused').length).toBeGreaterThanOrEqual(1);
    expect(events.at(-1)).toBe('failed');
    expect(failureNotice(run)).toMatch(/Pipeline #1 failed at requirements #1: max clarifying questions \(8\) exceeded/);
    // The refusals told the model what to do instead.
    const refusals = run.log
      .filter((call) => call.stage === 'requirements')
      .flatMap((call) => {
        const last = call.messages.at(-1)?.content;
        return Array.isArray(last) ? last : [];
      })
      .filter((block): block is ToolResultBlock => block.type === 'tool_result' && block.is_error === true);
    expect(refusals[0]?.content).toMatch(/Question limit \(8\) reached.*save_requirement.*complete_requirements_analysis/);
  });

  it('the question limit comes from settings (MAX_QUESTIONS / --max-questions)', async () => {
    expect(loadTeammateSettings({ MAX_QUESTIONS: '2' }).runtime.maxQuestions).toBe(2);
    expect(loadTeammateSettings({}, { maxQuestions: '3' }).runtime.maxQuestions).toBe(3);
    const run = await runValve({ requirements: 'always-ask' }, { runtime: loadTeammateSettings({ MAX_QUESTIONS: '2' }).runtime });
    expect(run.state).toMatchObject({ status: 'failed', reason: 'max clarifying questions (2) exceeded' });
    expect((run.state.tasks[0]!.artifacts.qa as unknown[]).length).toBe(2);
  });

  it('a reviewer that always rejects: the pipeline fails after max_revisions (default 3) with the reason', async () => {
    const run = await runValve({ review: 'always-reject' }, {}, 'implementation');
    expect(run.state.status).toBe('failed');
    expect(run.state.reason).toBe('max_revisions (3) reached; the reviewer still found 1 issue');
    expect(run.state.tasks.map((task) => `${task.stage}/${task.revision}/${task.status}`)).toEqual([
      'implementation/0/completed',
      'review/0/completed',
      'implementation/1/completed',
      'review/1/completed',
      'implementation/2/completed',
      'review/2/completed',
      'implementation/3/completed',
      'review/3/failed',
    ]);
    expect(run.state.revisions).toBe(3);
    const last = run.state.tasks.at(-1)!;
    expect(last.artifacts).toMatchObject({ verdict: 'changes requested', issues: [{ text: 'the reviewer is never satisfied', severity: 'major' }] });
    expect(failureNotice(run)).toMatch(/max_revisions \(3\) reached/);
  });

  it('the same blocker in two consecutive reviews: the pipeline fails as not converging, before max_revisions', async () => {
    const run = await runValve({ review: 'always-block' }, {}, 'implementation');
    expect(run.state.status).toBe('failed');
    expect(run.state.reason).toBe('not converging: main.py line 2 crashes on empty input');
    expect(run.state.tasks.map((task) => `${task.stage}/${task.revision}/${task.status}`)).toEqual([
      'implementation/0/completed',
      'review/0/completed',
      'implementation/1/completed',
      'review/1/failed',
    ]);
    expect(failureNotice(run)).toMatch(/not converging: main\.py line 2 crashes on empty input/);
  });

  it('max turns per task: a model that never signals fails the task at the limit', async () => {
    const run = await runValve({ requirements: 'spin' }, { maxTurns: 4 });
    expect(run.state).toMatchObject({ status: 'failed', reason: 'max turns (4) reached' });
    expect(run.state.tasks[0]).toMatchObject({ status: 'failed', result: 'max turns (4) reached' });
    expect(run.log.filter((call) => call.stage === 'requirements')).toHaveLength(4);
    expect(failureNotice(run)).toMatch(/max turns \(4\) reached/);
  });

  it('a stage agent that ends its turn without a signal is nudged once per attempt; each attempt backs off, then the task fails', async () => {
    const run = await runValve({ requirements: 'silent' }, { maxAttempts: 2, retryBaseMs: 100, retryMaxMs: 200 });
    const reason = 'no teammate finished it: ended its turn without calling complete_requirements_analysis (attempt 2 of 2, MAX_ATTEMPTS)';
    expect(run.state).toMatchObject({ status: 'failed', reason });
    const calls = run.log.filter((call) => call.stage === 'requirements');
    // Two attempts, each a turn and the nudge after it: never more.
    expect(calls).toHaveLength(4);
    expect(calls[0]!.messages.some((m) => typeof m.content === 'string' && NUDGE.test(m.content))).toBe(false);
    const nudge = calls[1]!.messages.at(-1)!;
    expect(nudge.role).toBe('user');
    expect(String(nudge.content)).toMatch(/end it with complete_requirements_analysis\.$/);
    const [task] = run.state.tasks;
    expect(task!.history.map((entry) => entry.event)).toEqual(['created', 'claimed', 'retry_later', 'claimed', 'failed']);
    expect(failureNotice(run)).toContain(reason);
  });

  it('a model whose every call is refused (an unknown tool, arguments the schema rejects) ends the attempt after 3 turns; each attempt backs off, then the task fails', async () => {
    for (const [behaviour, last] of [
      ['unknown-tool', "unknown tool 'frobnicate'"],
      ['bad-args', 'Invalid arguments for ask_clarifying_question: question: missing (a string is expected)'],
    ] as const) {
      const run = await runValve({ requirements: behaviour }, { maxAttempts: 2, retryBaseMs: 100, retryMaxMs: 200 });
      const reason = `no teammate finished it: the model's tool calls were refused 3 turns in a row (last: ${last}) (attempt 2 of 2, MAX_ATTEMPTS)`;
      expect(run.state).toMatchObject({ status: 'failed', reason });
      // Three turns an attempt, with a back-off between the attempts: never the 30 turns of the limit.
      expect(run.log.filter((call) => call.stage === 'requirements')).toHaveLength(6);
      expect(run.state.tasks[0]!.history.map((entry) => entry.event)).toEqual(['created', 'claimed', 'retry_later', 'claimed', 'failed']);
      expect(failureNotice(run)).toContain(reason);
    }
  });

  it('a model that reads the refusals and corrects itself goes on: the pipeline is approved', async () => {
    const run = await runValve({ requirements: 'refused-twice' });
    expect(run.state.status).toBe('approved');
    expect(run.state.tasks[0]!.history.map((entry) => entry.event)).not.toContain('retry_later');
  });

  it('the nudge is enough for an agent that then signals: the pipeline goes on to approval', async () => {
    const run = await runValve({ requirements: 'silent-once' });
    expect(run.state.status).toBe('approved');
    expect(run.state.tasks.map((task) => `${task.stage}/${task.status}`)).toEqual([
      'requirements/completed',
      'implementation/completed',
      'review/completed',
    ]);
  });

  it('close() right after start shuts every teammate down, even one that has not joined the team yet', async () => {
    const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-valve-')));
    roots.push(root);
    const session = new LeadSession({ rootDir: root, model: { kind: 'module', path: modelsFile, options: {} }, settings: { pollMs: 500, idleTimeoutMs: 0 } });
    sessions.push(session);
    await session.start();
    // A pipeline can end (or a person can quit) before every worker thread has registered itself.
    const { exits } = await session.close(HANG_MS);
    sessions.splice(sessions.indexOf(session), 1);
    expect(exits.map((exit) => exit.name).sort()).toEqual(['analyst', 'engineer', 'reviewer']);
    expect(session.running()).toEqual([]);
  });
});

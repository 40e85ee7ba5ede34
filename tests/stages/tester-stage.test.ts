/**
 * The worked example of docs/ARCHITECTURE.md ("Adding a stage"): a tester stage after review, added
 * in one folder (tests/fixtures/tester-stage/) and driven from requirement to approval. The analyst,
 * engineer and reviewer are the offline model; the tester is a scripted fake.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Teammate } from '../../src/core/agent/teammate.js';
import { Wake } from '../../src/core/agent/wake.js';
import { Mailbox } from '../../src/core/board/mailbox.js';
import { TaskBoard } from '../../src/core/board/task-board.js';
import { CONFIG_FILE, loadProjectConfig } from '../../src/core/config/project-config.js';
import { ScriptedModel } from '../../src/core/model/scripted/scripted-model.js';
import type { ModelClient } from '../../src/core/model/types.js';
import { Pipeline } from '../../src/core/stages/pipeline.js';
import { BUILTIN_REGISTRY, StageRegistry } from '../../src/core/stages/stage-registry.js';
import { stageTools } from '../../src/core/tools/registry.js';
import { DEFAULT_RUNTIME_SETTINGS } from '../../src/core/tools/tool.js';
import { HANG_MS } from '../helpers/agent-wait.js';
import { FakeModel, reply, toolUse } from '../helpers/fake-model.js';
import { withTester } from '../fixtures/tester-stage/index.js';

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) fs.rmSync(root, { recursive: true, force: true });
});

function tempRoot(): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-tester-'));
  roots.push(root);
  return root;
}

/** No lead answers here: the analyst's questions are refused at once, so it works from its assumptions. */
const NO_QUESTIONS = { ...DEFAULT_RUNTIME_SETTINGS, maxQuestions: 0 };

/** One teammate of `role` works what there is for it, and stops once idle. */
async function work(root: string, stages: StageRegistry, role: string, model: ModelClient): Promise<void> {
  const mate = new Teammate({ name: role, role, rootDir: root, model, wake: new Wake(), signal: AbortSignal.timeout(HANG_MS), stages, settings: { pollMs: 25, idleTimeoutMs: 300, runtime: NO_QUESTIONS } });
  expect(await mate.run()).toMatch(/^idle for/);
}

describe('a tester stage after review, added in one folder', () => {
  it('runs requirements → implementation → review → tester → approved; the tester gets what the review approved, and its artifact is recorded', async () => {
    const root = tempRoot();
    const stages = withTester(BUILTIN_REGISTRY);
    const board = new TaskBoard(root);
    const mailbox = new Mailbox(root);
    await mailbox.registry.ensure('crew');
    const pipeline = new Pipeline(board, mailbox, { stages });
    const first = await pipeline.post('Write a Python script that counts the words in a text file.');

    // The offline team works until the tester has something: a revision round included, if the review asks for one.
    const pendingRole = () => board.list().find((task) => task.status === 'pending')?.role;
    for (let role = pendingRole(); role && role !== 'tester'; role = pendingRole()) await work(root, stages, role, new ScriptedModel());
    const tester = new FakeModel([reply(toolUse('report_test_run', { passed: 3, failed: 0, summary: 'counted words in three sample files' }))]);
    await work(root, stages, 'tester', tester);
    tester.assertDone();

    const state = pipeline.state(first.pipeline!);
    expect(state.status).toBe('approved');
    expect(state.tasks.map((t) => t.stage)).toEqual(expect.arrayContaining(['requirements', 'implementation', 'review', 'tester']));
    const [review, test] = state.tasks.slice(-2);
    expect([review!.stage, test!.stage]).toEqual(['review', 'tester']);
    // The review handed on instead of ending the pipeline; the tester was handed the approved file and the verdict.
    expect(review!.artifacts).toMatchObject({ verdict: 'approved', signal: 'approve_code' });
    expect(review!.artifacts.final).toBeUndefined();
    expect(test!.artifacts.submitted).toEqual(review!.artifacts.submitted);
    expect(test!.handoff).toContain(`Approved by the review: ${review!.artifacts.submitted!.file}`);
    expect(test!.handoff).toContain(`The reviewer said: ${review!.artifacts.comment}`);
    expect(tester.requests[0]!.tools).toEqual(stageTools('tester', stages).map((tool) => tool.name));
    // Its own artifact, checked against its schema, and the pipeline's end.
    expect(test!.artifacts).toMatchObject({ testRun: { passed: 3, failed: 0, summary: 'counted words in three sample files' }, signal: 'report_test_run', final: true });
    expect(test!.subject).toMatch(/^Test( \(\d\))?: Write a Python script/);
    const lead = mailbox.registry.read().lead;
    const updates = mailbox.peek(lead).filter((m) => m.type === 'pipeline_update').map((m) => m.content);
    expect(updates).toContain(`Pipeline #${first.pipeline} approved: tested: 3 passed — counted words in three sample files`);
  });

  it('refuses a signal whose artifacts its schema does not take', async () => {
    const root = tempRoot();
    const stages = withTester(BUILTIN_REGISTRY);
    const board = new TaskBoard(root);
    const mailbox = new Mailbox(root);
    await mailbox.registry.ensure('crew');
    const pipeline = new Pipeline(board, mailbox, { stages });
    const first = await pipeline.post('Test the counter.', { startStage: 'tester' });
    const claim = await board.claim(first.id, 'tester');
    if (!claim.ok) throw new Error(claim.reason);
    await expect(pipeline.advance(claim.task, { owner: 'tester', token: claim.task.claims }, { tool: 'report_test_run', artifacts: { testRun: { passed: -1 } }, result: 'x' })).rejects.toThrow(
      /report_test_run recorded artifacts the tester stage does not take: testRun\.passed/,
    );
  });
});

describe('the same tester by autoteam.config.json alone', () => {
  it('is a stage of the registry with the generic handoff, reached from the review', () => {
    const dir = tempRoot();
    const config = {
      stages: {
        review: { signals: { approve_code: { next: 'tester', carry: ['submitted'] } } },
        tester: {
          role: 'tester',
          prompt: 'You are the tester. Run the approved program end to end on scratch data, then complete_stage(report).',
          tools: ['read_file', 'bash', 'complete_stage', 'fail_task'],
          signals: { complete_stage: { next: 'approved' } },
          retry: { keep: ['submitted'] },
        },
      },
    };
    fs.writeFileSync(path.join(dir, CONFIG_FILE), JSON.stringify(config));
    const stages = StageRegistry.from(loadProjectConfig(dir).stages);
    expect(stages.get('review').transitions.approve_code).toEqual({ next: 'tester', carry: ['submitted'] });
    const tester = stages.get('tester');
    expect(tester).toMatchObject({ role: 'tester', title: 'Tester', retry: { keep: ['submitted'] } });
    expect(stages.roles()).toContain('tester');
    const handoff = tester.handoff({ stage: 'tester', revision: 0, requirement: 'Count words.', requirements: {}, qa: [], criteria: [], issues: [], previousIssues: [], submitted: { file: 'wc.py', sha256: 'a'.repeat(64), revision: 0 } });
    expect(handoff).toContain('Submitted and approved: wc.py');
    expect(handoff).toContain('then end it with complete_stage(report).');
  });
});

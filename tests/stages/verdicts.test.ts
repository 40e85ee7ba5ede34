/**
 * Evidence-gated verdicts, through the public paths: real Teammates on a real board (in a temp dir)
 * driven by scripted models, and Pipeline.advance for the governance rules. Each refusal must reach
 * the model as a tool error naming what is missing, change nothing the runtime relies on, and leave
 * the task to the model for another turn.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_TEAMMATE_SETTINGS, type TeammateSettings } from '../../src/core/agent/settings.js';
import { Teammate } from '../../src/core/agent/teammate.js';
import { Wake } from '../../src/core/agent/wake.js';
import type { Artifacts, Criterion, Issue, Submitted } from '../../src/core/board/artifacts.js';
import { Mailbox } from '../../src/core/board/mailbox.js';
import type { Task } from '../../src/core/board/schemas.js';
import { TaskBoard } from '../../src/core/board/task-board.js';
import type { ModelClient, ModelMessage, ModelRequest, ModelResponse, ToolResultBlock } from '../../src/core/model/types.js';
import { Pipeline } from '../../src/core/stages/pipeline.js';
import { FakeModel } from '../helpers/fake-model.js';
import { type Step, StepModel, toolUse } from '../helpers/pipeline-models.js';
import { HANG_MS } from '../helpers/agent-wait.js';

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

const REQUIREMENT = 'Write a greeting program.';
const PROGRAM = '"""Greet."""\nprint("hi")\n';
const sha = (text: string) => createHash('sha256').update(text).digest('hex');

interface Setup {
  root: string;
  board: TaskBoard;
  pipeline: Pipeline;
  /** The workspace of pipeline #1. */
  workspace: string;
}

async function setup(): Promise<Setup> {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-verdicts-')));
  cleanups.push(() => fs.rmSync(root, { recursive: true, force: true }));
  const board = new TaskBoard(root);
  const mailbox = new Mailbox(root);
  await mailbox.registry.ensure('test');
  const pipeline = new Pipeline(board, mailbox);
  return { root, board, pipeline, workspace: pipeline.workspaceOf(1) };
}

type Scripted = ModelClient & { assertDone(): void };

/** Runs one in-process teammate until it has done its work and idled out. */
async function runTeammate<M extends Scripted>(root: string, name: string, model: M, settings: Partial<TeammateSettings> = {}): Promise<M> {
  const teammate = new Teammate({
    name,
    role: name,
    rootDir: root,
    model,
    wake: new Wake(),
    signal: AbortSignal.timeout(HANG_MS),
    settings: { pollMs: 25, idleTimeoutMs: 250, ...settings },
  });
  const reason = await teammate.run();
  expect(reason).toMatch(/^idle for/);
  model.assertDone();
  return model;
}

const steps = (root: string, name: string, script: Step[], settings?: Partial<TeammateSettings>) =>
  runTeammate(root, name, new StepModel(script), settings);

/** The tool_result blocks of the last user message of a conversation. */
function lastResults(messages: ModelMessage[]): ToolResultBlock[] {
  const last = messages.at(-1);
  expect(last?.role).toBe('user');
  return (Array.isArray(last!.content) ? last!.content : []).filter((b): b is ToolResultBlock => b.type === 'tool_result');
}

/** What the model was answered to the tools of its `n`-th response (0-based), from the request that followed it. */
function answersTo(model: StepModel, n: number): ToolResultBlock[] {
  const request = model.requests[n + 1];
  expect(request, `no request after response #${n}`).toBeDefined();
  return lastResults(request!.messages);
}

const stageLine = (board: TaskBoard) => board.list().map((t) => `${t.id}:${t.stage}:${t.revision}:${t.status}`);

/**
 * A pipeline (#1) posted at implementation whose engineer submitted main.py through the real
 * submit_for_review: returns the pending review task. `criteria` replaces the pipeline's criteria.
 */
async function reviewReady(s: Setup, files: Record<string, string> = { 'main.py': PROGRAM }, criteria?: Criterion[]): Promise<Task> {
  const first = await s.pipeline.post(REQUIREMENT, { startStage: 'implementation' });
  if (criteria) await s.board.update(first.id, { artifacts: { criteria } });
  fs.mkdirSync(s.workspace, { recursive: true });
  for (const [file, content] of Object.entries(files)) fs.writeFileSync(path.join(s.workspace, file), content);
  await steps(s.root, 'engineer', [[toolUse('submit_for_review', { file: 'main.py' })]]);
  const review = s.board.list().find((t) => t.stage === 'review');
  expect(review).toMatchObject({ status: 'pending', revision: 0, artifacts: { submitted: { file: 'main.py', sha256: sha(files['main.py']!), revision: 0 } } });
  return review!;
}

const lintAndTest = () => [toolUse('run_linter', { file: 'main.py' }), toolUse('run_tests', { file: 'main.py' })];
const approve = (criteria: unknown[], comment = 'looks right') => toolUse('approve_code', { comment, criteria });

// ---- approve_code --------------------------------------------------------------------------------

describe('approve_code is gated on evidence', () => {
  it('a rubber stamp (approve first, nothing run) is refused with what is missing; the review goes on and is approved once shown', async () => {
    const s = await setup();
    const review = await reviewReady(s);
    let between: Task | undefined;
    let statusBetween = '';
    const model = await steps(s.root, 'reviewer', [
      [approve([], 'LGTM')],
      () => {
        between = s.board.get(review.id);
        statusBetween = s.pipeline.state(1).status;
        return lintAndTest();
      },
      [approve([{ id: 'AC1', met: true, evidence: 'run_tests: the smoke run printed hi and exited 0' }])],
    ]);

    const [refusal] = answersTo(model, 0);
    expect(refusal!.is_error).toBe(true);
    expect(refusal!.content).toMatch(/^Approval refused: 3 things not yet shown:/);
    expect(refusal!.content).toContain('- run_linter has not been run in this review');
    expect(refusal!.content).toContain('- run_tests has not been run in this review');
    expect(refusal!.content).toContain("- AC1 has no verdict: give {id: 'AC1', met, evidence} (The program does what was asked: Write a greeting program.)");
    // Refused: the task is still the reviewer's, nothing approved, and the model had another turn.
    expect(between).toMatchObject({ status: 'in_progress', owner: 'reviewer' });
    expect(between!.artifacts.verdict).toBeUndefined();
    expect(statusBetween).toBe('active');
    expect(model.requests).toHaveLength(3);

    const [lint, tests] = answersTo(model, 1);
    expect(lint!.is_error).toBeUndefined();
    expect(tests!.content).toMatch(/^main\.py: PASS \(smoke run, exit 0\)/);

    expect(stageLine(s.board)).toEqual(['1:implementation:0:completed', '2:review:0:completed']);
    expect(s.board.get(review.id).artifacts).toMatchObject({
      verdict: 'approved',
      signal: 'approve_code',
      criteriaVerdicts: [{ id: 'AC1', met: true, evidence: 'run_tests: the smoke run printed hi and exited 0' }],
      lint: { file: 'main.py', sha256: sha(PROGRAM) },
      tests: { file: 'main.py', ok: true, sha256: sha(PROGRAM) },
    });
    expect(s.pipeline.state(1).status).toBe('approved');
    expect(new Mailbox(s.root).peek('lead')).toEqual([expect.objectContaining({ type: 'pipeline_update', status: 'approved' })]);
  });

  it('refuses a missing criterion, an unmet one, empty evidence, an unknown id, a check never run and a failed check — each by name', async () => {
    const s = await setup();
    const criteria: Criterion[] = [
      { id: 'AC1', criterion: 'Prints hi', verify: 'run it and read stdout' },
      { id: 'AC2', criterion: 'Exits with status 0', verify: 'run it and check the exit code' },
    ];
    const review = await reviewReady(s, undefined, criteria);
    const passing = 'import subprocess, sys\nout = subprocess.run([sys.executable, "main.py"], capture_output=True, text=True)\nprint(out.stdout.strip())\nsys.exit(0 if out.stdout.strip() == "hi" else 1)\n';
    const failing = 'import sys\nprint("not what was asked")\nsys.exit(1)\n';
    const good = (id: string, evidence = 'CHK1 passed: it printed hi') => ({ id, met: true, evidence });
    const attempts: Array<{ criteria: unknown[]; gap: string }> = [
      { criteria: [good('AC1')], gap: "AC2 has no verdict: give {id: 'AC2', met, evidence} (Exits with status 0)" },
      { criteria: [good('AC1'), { id: 'AC2', met: false, evidence: 'CHK1' }], gap: 'AC2 is not met: request_revision instead' },
      { criteria: [good('AC1'), { id: 'AC2', met: true, evidence: '   ' }], gap: 'AC2 has no evidence: cite the check (CHKn) or test output that shows it' },
      { criteria: [good('AC1'), good('AC2'), good('AC7')], gap: 'AC7 is not a criterion of this pipeline (criteria: AC1, AC2)' },
      { criteria: [good('AC1'), good('AC2', 'CHK9 shows it')], gap: 'the evidence for AC2 cites CHK9, which was never run in this review' },
      { criteria: [good('AC1'), good('AC2', 'CHK2 shows it')], gap: 'the evidence for AC2 cites CHK2, which failed (exit 1)' },
    ];
    let between: Task | undefined;
    const model = await steps(s.root, 'reviewer', [
      [...lintAndTest(), toolUse('run_check', { code: passing, language: 'python' }), toolUse('run_check', { code: failing })],
      attempts.map((attempt) => approve(attempt.criteria)),
      () => {
        between = s.board.get(review.id);
        return [approve([good('AC1'), good('AC2', 'CHK1 passed and run_tests exited 0')])];
      },
    ]);

    const [, , chk1, chk2] = answersTo(model, 0);
    expect(chk1!.content).toMatch(/^CHK1: PASS \[python\]/);
    expect(chk2!.content).toMatch(/^CHK2: FAIL \[python\]/);
    const refusals = answersTo(model, 1);
    expect(refusals).toHaveLength(attempts.length);
    attempts.forEach((attempt, i) => {
      expect(refusals[i]!.is_error, attempt.gap).toBe(true);
      // Exactly the one thing wrong with this attempt is named.
      expect(refusals[i]!.content).toContain(`Approval refused: 1 thing not yet shown:\n- ${attempt.gap}\n`);
    });
    expect(between).toMatchObject({ status: 'in_progress', owner: 'reviewer' });
    expect(between!.artifacts.verdict).toBeUndefined();
    expect(between!.artifacts.checks).toEqual([
      expect.objectContaining({ id: 'CHK1', ok: true, exitCode: 0, sha256: sha(PROGRAM) }),
      expect.objectContaining({ id: 'CHK2', ok: false, exitCode: 1, output: expect.stringContaining('not what was asked') }),
    ]);
    expect(s.board.get(review.id)).toMatchObject({ status: 'completed', artifacts: { verdict: 'approved' } });
    expect(s.pipeline.state(1).status).toBe('approved');
  });

  it('a failing test in the workspace blocks approval: run_tests FAIL → "run_tests failed"', async () => {
    const s = await setup();
    const failingTest = 'import unittest\n\n\nclass GreetingTest(unittest.TestCase):\n    def test_greets_the_world(self):\n        self.assertEqual("hi", "hello")\n';
    const review = await reviewReady(s, { 'main.py': PROGRAM, 'test_main.py': failingTest });
    const model = await steps(s.root, 'reviewer', [
      lintAndTest(),
      [approve([{ id: 'AC1', met: true, evidence: 'it prints hi' }])],
      [toolUse('request_revision', { issues: [{ text: 'test_main.py fails: greets with hi, not hello', severity: 'blocker' }] })],
    ]);
    const [lint, tests] = answersTo(model, 0);
    expect(lint!.is_error).toBeUndefined();
    expect(tests!.content).toMatch(/^main\.py: FAIL \(unittest tests, exit 1\)/);
    expect(tests!.content).toContain('AssertionError');
    const [refusal] = answersTo(model, 1);
    expect(refusal).toMatchObject({ is_error: true, content: expect.stringContaining('- run_tests failed: tests must pass before approval (request_revision instead)') });
    expect(refusal!.content).toMatch(/^Approval refused: 1 thing not yet shown:/);
    expect(s.board.get(review.id).artifacts).toMatchObject({ verdict: 'changes requested', tests: { ok: false, mode: 'unittest', sha256: sha(PROGRAM) } });
    expect(stageLine(s.board)).toEqual(['1:implementation:0:completed', '2:review:0:completed', '3:implementation:1:pending']);
  });

  it('lint that ran on a different version of the file than submitted is refused until run again', async () => {
    const s = await setup();
    const review = await reviewReady(s);
    const evidence = [{ id: 'AC1', met: true, evidence: 'the smoke run printed hi' }];
    // FakeModel awaits its steps, so the board can be changed between two model calls.
    const model = await runTeammate(
      s.root,
      'reviewer',
      new FakeModel([
        lintAndTest(),
        async () => {
          // As if the linter had looked at another version of main.py.
          const changed = await s.board.update(review.id, { artifacts: (a: Artifacts) => ({ lint: { ...a.lint!, sha256: 'f'.repeat(64) } }) });
          expect(changed.ok).toBe(true);
          return [approve(evidence)];
        },
        [toolUse('run_linter', { file: 'main.py' }), approve(evidence)],
      ]),
    );
    const refusal = lastResults(model.requests[2]!.messages)[0]!;
    expect(refusal.is_error).toBe(true);
    expect(refusal.content).toContain(
      `Approval refused: 1 thing not yet shown:\n- run_linter ran on a different version of main.py than the one submitted (sha256 ${sha(PROGRAM).slice(0, 12)}); run it again\n`,
    );
    expect(s.board.get(review.id)).toMatchObject({ status: 'completed', artifacts: { verdict: 'approved', lint: { sha256: sha(PROGRAM) } } });
  });
});

// ---- request_revision ----------------------------------------------------------------------------

describe('request_revision', () => {
  it('only minor issues are refused ("approve with notes instead"); plain strings count as major', async () => {
    const s = await setup();
    const review = await reviewReady(s);
    let between: Task | undefined;
    const model = await steps(s.root, 'reviewer', [
      [toolUse('request_revision', { issues: [{ text: 'rename x to count', severity: 'minor' }, { text: 'add a blank line', severity: 'minor' }] })],
      () => {
        between = s.board.get(review.id);
        return [toolUse('request_revision', { issues: [{ text: 'rename x to count', severity: 'minor' }, 'handle empty input'] })];
      },
    ]);
    const [refusal] = answersTo(model, 0);
    expect(refusal).toMatchObject({ is_error: true, content: expect.stringContaining('Approve with notes instead') });
    expect(refusal!.content).toMatch(/^Every issue is minor/);
    expect(between).toMatchObject({ status: 'in_progress', owner: 'reviewer' });
    expect(between!.artifacts.verdict).toBeUndefined();

    const issues: Issue[] = [
      { text: 'rename x to count', severity: 'minor' },
      { text: 'handle empty input', severity: 'major' },
    ];
    expect(s.board.get(review.id)).toMatchObject({ status: 'completed', artifacts: { verdict: 'changes requested', issues } });
    const revision = s.board.list().find((t) => t.stage === 'implementation' && t.revision === 1);
    expect(revision).toMatchObject({ status: 'pending', artifacts: { issues } });
    expect(revision!.handoff).toContain('- [minor] rename x to count\n- [major] handle empty input');
  });
});

// ---- requirements --------------------------------------------------------------------------------

describe('acceptance criteria', () => {
  it('add_acceptance_criterion numbers AC1, AC2 and dedupes; complete_requirements_analysis is refused until one exists', async () => {
    const s = await setup();
    await s.pipeline.post(REQUIREMENT);
    let between: Task | undefined;
    const model = await steps(s.root, 'analyst', [
      [toolUse('save_requirement', { key: 'output', value: 'prints hello' }), toolUse('complete_requirements_analysis', { summary: 'too early' })],
      () => {
        between = s.board.get(1);
        return [
          toolUse('add_acceptance_criterion', { criterion: 'Prints hello', verify: 'run python3 main.py and read stdout' }),
          toolUse('add_acceptance_criterion', { criterion: 'Exits with status 0', verify: 'run it and check $?' }),
          toolUse('add_acceptance_criterion', { criterion: '  prints   HELLO ', verify: 'another way' }),
        ];
      },
      [toolUse('complete_requirements_analysis', { summary: 'one requirement, two criteria' })],
    ]);
    const [saved, refusal] = answersTo(model, 0);
    expect(saved!.is_error).toBeUndefined();
    expect(refusal).toMatchObject({ is_error: true, content: expect.stringMatching(/^Not complete: no acceptance criterion yet: call add_acceptance_criterion/) });
    expect(refusal!.content).not.toContain('no requirement saved');
    expect(between).toMatchObject({ status: 'in_progress', owner: 'analyst', artifacts: { requirements: { output: 'prints hello' } } });
    expect(between!.artifacts.criteria).toBeUndefined();

    expect(answersTo(model, 1).map((a) => [a.content, a.is_error])).toEqual([
      ['Recorded AC1.', undefined],
      ['Recorded AC2.', undefined],
      ['Already recorded as AC1.', undefined],
    ]);
    const criteria: Criterion[] = [
      { id: 'AC1', criterion: 'Prints hello', verify: 'run python3 main.py and read stdout' },
      { id: 'AC2', criterion: 'Exits with status 0', verify: 'run it and check $?' },
    ];
    expect(s.board.get(1)).toMatchObject({ status: 'completed', artifacts: { criteria } });
    const impl = s.board.get(2);
    expect(impl).toMatchObject({ stage: 'implementation', status: 'pending', artifacts: { criteria } });
    expect(impl.handoff).toContain('Acceptance criteria:\n- [AC1] Prints hello (verify: run python3 main.py and read stdout)\n- [AC2] Exits with status 0 (verify: run it and check $?)');
  });
});

// ---- run_check -----------------------------------------------------------------------------------

describe('run_check', () => {
  it('runs in a scratch copy: a check that overwrites and deletes the submitted file changes nothing in the workspace; recorded as CHKn', async () => {
    const s = await setup();
    const review = await reviewReady(s);
    const vandal = [
      'import os, pathlib',
      'pathlib.Path("main.py").write_text("print(\'pwned\')\\n")',
      'pathlib.Path("junk.txt").write_text("left behind")',
      'os.remove("main.py")',
      'print("main.py deleted; cwd", os.getcwd())',
    ].join('\n');
    const stillThere = 'import os, sys\nprint(open("main.py").read())\nsys.exit(0 if os.path.exists("main.py") and not os.path.exists("junk.txt") else 3)\n';
    const exitsTwo = 'import sys\nprint("checking")\nsys.exit(2)\n';
    const model = await steps(s.root, 'reviewer', [
      [toolUse('run_check', { code: vandal, language: 'python' })],
      [toolUse('run_check', { code: stillThere, language: 'python' }), toolUse('run_check', { code: exitsTwo, language: 'python' })],
      [...lintAndTest(), approve([{ id: 'AC1', met: true, evidence: 'CHK2: main.py still there and prints hi' }])],
    ]);
    expect(answersTo(model, 0)[0]!.content).toMatch(/^CHK1: PASS \[python\]/);
    const [second, third] = answersTo(model, 1);
    expect(second!.content).toMatch(/^CHK2: PASS/);
    expect(second!.content).toContain('print("hi")');
    expect(third!.content).toMatch(/^CHK3: FAIL/);

    // The engineer's workspace is as submitted: same bytes, nothing added.
    expect(fs.readFileSync(path.join(s.workspace, 'main.py'), 'utf8')).toBe(PROGRAM);
    expect(sha(fs.readFileSync(path.join(s.workspace, 'main.py'), 'utf8'))).toBe(s.board.get(review.id).artifacts.submitted!.sha256);
    expect(fs.readdirSync(s.workspace).filter((f) => !f.startsWith('.'))).toEqual(['main.py']);

    const checks = s.board.get(review.id).artifacts.checks!;
    expect(checks.map((c) => [c.id, c.ok, c.exitCode, c.language])).toEqual([
      ['CHK1', true, 0, 'python'],
      ['CHK2', true, 0, 'python'],
      ['CHK3', false, 2, 'python'],
    ]);
    expect(checks[0]).toMatchObject({ code: vandal, sha256: sha(PROGRAM), output: expect.stringContaining('main.py deleted; cwd') });
    // It ran elsewhere than the workspace.
    expect(checks[0]!.output).not.toContain(`cwd ${s.workspace}`);
    expect(checks[2]!.output).toContain('checking');
    expect(s.board.get(review.id).artifacts.verdict).toBe('approved');
  });
});

// ---- revisions -----------------------------------------------------------------------------------

/** Review r0 sends main.py back with `issues`; returns the pending implementation r1 task. */
async function sentBack(s: Setup, issues: unknown[], criteria?: Criterion[]): Promise<Task> {
  await reviewReady(s, undefined, criteria);
  await steps(s.root, 'reviewer', [[toolUse('request_revision', { issues })]]);
  const revision = s.board.list().find((t) => t.stage === 'implementation' && t.revision === 1);
  expect(revision).toMatchObject({ status: 'pending' });
  return revision!;
}

describe('revisions', () => {
  it('submit_for_review at revision 1 with byte-identical files is refused ("Nothing changed since revision 0"); a change is accepted', async () => {
    const s = await setup();
    const revision = await sentBack(s, ['print hello, not hi']);
    let between: Task | undefined;
    const model = await steps(s.root, 'engineer', [
      // Rewriting the same bytes is no change either.
      [toolUse('write_file', { path: 'main.py', content: PROGRAM }), toolUse('submit_for_review', { file: 'main.py' })],
      () => {
        between = s.board.get(revision.id);
        return [toolUse('write_file', { path: 'main.py', content: '"""Greet."""\nprint("hello")\n' }), toolUse('submit_for_review', { file: 'main.py' })];
      },
    ]);
    const [, refusal] = answersTo(model, 0);
    expect(refusal).toMatchObject({
      is_error: true,
      content: expect.stringMatching(/^Nothing changed since revision 0: every file is byte-identical to the version that was sent back \(by its review, or by the merge queue\)\./),
    });
    expect(between).toMatchObject({ status: 'in_progress', owner: 'engineer' });
    expect(stageLine(s.board)).toEqual([
      '1:implementation:0:completed',
      '2:review:0:completed',
      '3:implementation:1:completed',
      '4:review:1:pending',
    ]);
    expect(s.board.get(4).artifacts.submitted).toMatchObject({ file: 'main.py', revision: 1, sha256: sha('"""Greet."""\nprint("hello")\n') });
  });

  it('the re-review handoff carries the previous issues with severities and a unified diff; the revision handoff lists issues and criteria', async () => {
    const s = await setup();
    const criteria: Criterion[] = [{ id: 'AC1', criterion: 'Prints hello', verify: 'run python3 main.py and read stdout' }];
    const issues: Issue[] = [
      { text: 'main.py line 2: prints hi, not hello', severity: 'major', criterion: 'AC1' },
      { text: 'the docstring could say more', severity: 'minor' },
    ];
    const revision = await sentBack(s, issues, criteria);
    expect(revision.artifacts).toMatchObject({ issues, criteria });
    expect(revision.handoff).toContain('This is revision 1. The reviewer sent the work back with these issues:\n- [major] main.py line 2: prints hi, not hello (AC1)\n- [minor] the docstring could say more');
    expect(revision.handoff).toContain('- [AC1] Prints hello (verify: run python3 main.py and read stdout)');

    const fixed = '"""Greet."""\nprint("hello")\n';
    await steps(s.root, 'engineer', [[toolUse('write_file', { path: 'main.py', content: fixed }), toolUse('submit_for_review', { file: 'main.py' })]]);
    const rereview = s.board.list().find((t) => t.stage === 'review' && t.revision === 1)!;
    expect(rereview).toMatchObject({ status: 'pending', artifacts: { previousIssues: issues, criteria } });
    const diff = rereview.artifacts.diff!;
    expect(diff).toContain('--- a/main.py');
    expect(diff).toContain('+++ b/main.py');
    expect(diff).toContain('-print("hi")');
    expect(diff).toContain('+print("hello")');
    expect(diff).not.toContain('-"""Greet."""'); // context, not a change
    const handoff = rereview.handoff!;
    expect(handoff).toContain('The previous review (revision 0) asked for:\n- [major] main.py line 2: prints hi, not hello (AC1)\n- [minor] the docstring could say more');
    expect(handoff).toContain(`Changes since revision 0:\n\`\`\`diff\n${diff}\n\`\`\``);
    expect(handoff).toContain(`Submitted file: main.py (revision 1, sha256 ${sha(fixed).slice(0, 12)})`);
    expect(handoff).toContain(fixed.trimEnd());
  });
});

// ---- governance ----------------------------------------------------------------------------------

describe('pipeline governance', () => {
  async function claimed(s: Setup, id: number, owner: string) {
    const claim = await s.board.claim(id, owner);
    if (!claim.ok) throw new Error(claim.reason);
    return { task: claim.task, fence: { owner, token: claim.task.claims } };
  }

  /** The engineer's side of a stage, as submit_for_review records it. */
  async function submit(s: Setup, id: number, content: string, revision: number) {
    fs.mkdirSync(s.workspace, { recursive: true });
    fs.writeFileSync(path.join(s.workspace, 'main.py'), content);
    const { task, fence } = await claimed(s, id, 'engineer');
    const submitted: Submitted = { file: 'main.py', sha256: sha(content), revision, files: { 'main.py': sha(content) } };
    const result = await s.pipeline.advance(task, fence, { tool: 'submit_for_review', artifacts: { submitted }, result: 'submitted main.py' });
    expect(result).toMatchObject({ ok: true, status: 'active', next: { stage: 'review', revision } });
    return result.next!;
  }

  async function sendBack(s: Setup, id: number, issues: Issue[]) {
    const { task, fence } = await claimed(s, id, 'reviewer');
    return s.pipeline.advance(task, fence, { tool: 'request_revision', artifacts: { verdict: 'changes requested', issues }, result: `changes requested (${issues.length})` });
  }

  it('the same blocker in two consecutive reviews (line numbers aside) fails the pipeline "not converging"; the lead is told', async () => {
    const s = await setup();
    await s.pipeline.post(REQUIREMENT, { startStage: 'implementation' });
    const review0 = await submit(s, 1, 'print(input()[0])\n', 0);
    const first = await sendBack(s, review0.id, [{ text: 'main.py line 3: crashes on empty input', severity: 'blocker' }]);
    expect(first).toMatchObject({ ok: true, status: 'active', next: { stage: 'implementation', revision: 1 } });
    const review1 = await submit(s, first.next!.id, 'x = input()\nprint(x[0])\n', 1);
    const second = await sendBack(s, review1.id, [
      { text: 'add a docstring', severity: 'major' },
      { text: 'main.py line 17: Crashes on  empty input!', severity: 'blocker' },
    ]);
    expect(second).toEqual({ ok: true, status: 'failed', next: null, reason: 'not converging: main.py line 17: Crashes on  empty input!' });
    expect(s.board.get(review1.id)).toMatchObject({ status: 'failed', result: second.reason, artifacts: { verdict: 'changes requested' } });
    expect(s.board.list()).toHaveLength(4); // no revision 2 posted
    expect(s.pipeline.state(1)).toMatchObject({ status: 'failed', reason: expect.stringMatching(/^not converging: /) });
    expect(new Mailbox(s.root).peek('lead')).toEqual([
      expect.objectContaining({ type: 'pipeline_update', status: 'failed', pipeline: 1, content: `Pipeline #1 failed: ${second.reason}` }),
    ]);
  });

  it('a repeated major issue, or a blocker that was only major before, does not end the pipeline', async () => {
    const s = await setup();
    await s.pipeline.post(REQUIREMENT, { startStage: 'implementation' });
    const review0 = await submit(s, 1, 'print(input()[0])\n', 0);
    const first = await sendBack(s, review0.id, [{ text: 'main.py line 3: crashes on empty input', severity: 'major' }]);
    const review1 = await submit(s, first.next!.id, 'x = input()\nprint(x[0])\n', 1);
    const second = await sendBack(s, review1.id, [{ text: 'main.py line 4: crashes on empty input', severity: 'major' }]);
    expect(second).toMatchObject({ ok: true, status: 'active', next: { stage: 'implementation', revision: 2 } });
    const review2 = await submit(s, second.next!.id, 'x = input()\nprint(x[:1])\n', 2);
    const third = await sendBack(s, review2.id, [{ text: 'main.py line 4: crashes on empty input', severity: 'blocker' }]);
    expect(third).toMatchObject({ ok: true, status: 'active', next: { stage: 'implementation', revision: 3 } });
    expect(s.pipeline.state(1).status).toBe('active');
    expect(new Mailbox(s.root).peek('lead')).toEqual([]);
  });
});

// ---- budgets -------------------------------------------------------------------------------------

/** A StepModel whose every call reports `inputTokens` input tokens and 10 output tokens. */
class CostlyModel extends StepModel {
  constructor(
    script: Step[],
    private readonly inputTokens: number,
  ) {
    super(script);
  }

  override async create(request: ModelRequest): Promise<ModelResponse> {
    const response = await super.create(request);
    return { ...response, usage: { ...response.usage, inputTokens: this.inputTokens, outputTokens: 10 } };
  }
}

const runtime = (overrides: Partial<TeammateSettings['runtime']>) => ({ runtime: { ...DEFAULT_TEAMMATE_SETTINGS.runtime, ...overrides } });

describe('pipeline budgets', () => {
  it('maxPipelineSteps counts model calls over every stage of the pipeline; the next call is refused and the pipeline fails', async () => {
    const s = await setup();
    await s.pipeline.post(REQUIREMENT);
    const settings = runtime({ maxPipelineSteps: 3 });
    await steps(
      s.root,
      'analyst',
      [
        [toolUse('save_requirement', { key: 'output', value: 'hello' }), toolUse('add_acceptance_criterion', { criterion: 'Prints hello', verify: 'run it' })],
        [toolUse('complete_requirements_analysis', { summary: 'done' })],
      ],
      settings,
    );
    // One call left in the pipeline: the engineer keeps working, and is stopped before its second call.
    const engineer = await steps(s.root, 'engineer', [[toolUse('write_file', { path: 'main.py', content: PROGRAM })]], settings);
    expect(engineer.requests).toHaveLength(1);
    expect(s.board.get(1)).toMatchObject({ status: 'completed', usage: { calls: 2, inputTokens: 2, outputTokens: 2 } });
    const impl = s.board.get(2);
    expect(impl).toMatchObject({ status: 'failed', usage: { calls: 1, inputTokens: 1, outputTokens: 1 } });
    expect(impl.result).toMatch(/^step budget used up: pipeline #1 made 3 of 3 model calls \(set by --max-pipeline-steps, MAX_PIPELINE_STEPS or limits\.maxPipelineSteps\)$/);
    expect(s.pipeline.state(1)).toMatchObject({ status: 'failed', usage: { calls: 3 }, reason: impl.result });
    expect(s.board.list()).toHaveLength(2);
    expect(new Mailbox(s.root).peek('lead')).toEqual([
      expect.objectContaining({ type: 'pipeline_update', status: 'failed', content: expect.stringContaining('step budget used up') }),
    ]);
  });

  it('pipelineTokenBudget: input + output tokens by provider usage; past the budget the pipeline fails', async () => {
    const s = await setup();
    await s.pipeline.post(REQUIREMENT);
    const model = new CostlyModel(
      [
        [toolUse('save_requirement', { key: 'output', value: 'hello' })],
        [toolUse('add_acceptance_criterion', { criterion: 'Prints hello', verify: 'run it' })],
      ],
      600,
    );
    await runTeammate(s.root, 'analyst', model, runtime({ pipelineTokenBudget: 1000 }));
    // 610 tokens after the first call (under the budget), 1,220 after the second: no third call.
    expect(model.requests).toHaveLength(2);
    const task = s.board.get(1);
    expect(task).toMatchObject({ status: 'failed', usage: { calls: 2, inputTokens: 1200, outputTokens: 20 } });
    expect(task.result).toBe('token budget used up: pipeline #1 used 1,220 tokens (limit 1,000, set by --token-budget-pipeline, TOKEN_BUDGET_PIPELINE or limits.tokenBudgetPipeline)');
    expect(s.pipeline.state(1)).toMatchObject({ status: 'failed', reason: task.result });
  });

  it('counts the calls no write has carried yet: turns that write nothing are stopped at the budget too', async () => {
    const s = await setup();
    await s.pipeline.post(REQUIREMENT);
    await steps(s.root, 'analyst', [[toolUse('save_requirement', { key: 'output', value: 'hello' }), toolUse('add_acceptance_criterion', { criterion: 'Prints hello', verify: 'run it' })], [toolUse('complete_requirements_analysis', { summary: 'done' })]]);
    // read_file records nothing on the task: these calls' usage is on the board only once the task ends.
    const model = new CostlyModel([[toolUse('read_file', { path: 'main.py' })], [toolUse('read_file', { path: 'main.py' })], [toolUse('read_file', { path: 'main.py' })]], 600);
    await runTeammate(s.root, 'engineer', model, runtime({ pipelineTokenBudget: 1800 }));
    // 4 tokens of the analyst's, then 610 a call: 1,224 after two calls, 1,834 after three — so no fourth.
    expect(model.requests).toHaveLength(3);
    const impl = s.board.get(2);
    expect(impl).toMatchObject({ status: 'failed', usage: { calls: 3, inputTokens: 1800, outputTokens: 30 } });
    expect(impl.result).toMatch(/^token budget used up: pipeline #1 used /);
  });
});

describe('when a pipeline is approved', () => {
  it('only when the task whose signal leads to approved completed: a review handing on to another stage is not the end, even before that stage is posted', async () => {
    const { pipelineStatus } = await import('../../src/core/stages/pipeline-status.js');
    const at = new Date().toISOString();
    const task = (id: number, stage: string, artifacts: Record<string, unknown>) =>
      ({ id, stage, status: 'completed', artifacts, pipeline: 1, revision: 0, history: [], createdAt: at, updatedAt: at }) as never;
    const handedOn = task(3, 'review', { verdict: 'approved', signal: 'approve_code' });
    expect(pipelineStatus([handedOn])).toBe('active');
    expect(pipelineStatus([handedOn, task(4, 'docs', { signal: 'complete_stage', final: true })])).toBe('approved');
    // A board written before signals were recorded: the approving review ended it.
    expect(pipelineStatus([task(3, 'review', { verdict: 'approved' })])).toBe('approved');
  });

  it('the approval is the final task (what the run summary reports its criteria and commit from), or an old board\'s approving verdict', async () => {
    const { approvalOf } = await import('../../src/core/stages/pipeline-status.js');
    const at = new Date().toISOString();
    const task = (id: number, stage: string, artifacts: Record<string, unknown>) =>
      ({ id, stage, status: 'completed', artifacts, pipeline: 1, revision: 0, history: [], createdAt: at, updatedAt: at }) as never;
    const review = task(3, 'review', { verdict: 'approved', signal: 'approve_code' });
    const docs = task(4, 'docs', { signal: 'complete_stage', final: true });
    expect(approvalOf([review])).toBeUndefined();
    expect(approvalOf([review, docs])).toBe(docs);
    const old = task(3, 'review', { verdict: 'approved' });
    expect(approvalOf([old])).toBe(old);
  });
});

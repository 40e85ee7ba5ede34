/**
 * Tools through the real loop: bad arguments for every teammate and lead tool, stage gating, signal
 * ordering, refusals that must change nothing on the board, and the pipeline state machine itself.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { runLoop } from '../../src/core/agent/loop.js';
import { Teammate } from '../../src/core/agent/teammate.js';
import { Wake } from '../../src/core/agent/wake.js';
import { Mailbox } from '../../src/core/board/mailbox.js';
import type { Artifacts } from '../../src/core/board/artifacts.js';
import type { Stage, Task } from '../../src/core/board/schemas.js';
import { TaskBoard } from '../../src/core/board/task-board.js';
import type { ModelMessage, ModelRequest, ToolResultBlock } from '../../src/core/model/types.js';
import { COORDINATION_TOOL_NAMES, STAGE_DEFINITIONS } from '../../src/core/stages/definitions.js';
import { Pipeline } from '../../src/core/stages/pipeline.js';
import { snapshotWorkspace } from '../../src/core/stages/submission.js';
import { LEAD_TOOL_NAMES } from '../../src/core/tools/lead/names.js';
import { leadTools, type LeadServices } from '../../src/core/tools/lead/index.js';
import { stageTools, TEAMMATE_TOOLS } from '../../src/core/tools/registry.js';
import { CONFIG_FILE, loadProjectConfig } from '../../src/core/config/project-config.js';
import { StageRegistry } from '../../src/core/stages/stage-registry.js';
import { type ToolContext, type ToolDefinition, toolSpec } from '../../src/core/tools/tool.js';
import { type Step, StepModel, textBlock, toolUse } from '../helpers/pipeline-models.js';
import { makeToolContext, type TestContext } from '../tools/context.js';
import { HANG_MS } from '../helpers/agent-wait.js';

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

function tempRoot(): string {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-stages-')));
  cleanups.push(() => fs.rmSync(root, { recursive: true, force: true }));
  return root;
}

function testContext(): TestContext {
  const context = makeToolContext();
  cleanups.push(context.cleanup);
  return context;
}

/** The tool_result blocks the loop put in the last user message. */
function lastResults(messages: ModelMessage[]): ToolResultBlock[] {
  const last = messages.at(-1);
  expect(last?.role).toBe('user');
  return (Array.isArray(last!.content) ? last!.content : []).filter((b): b is ToolResultBlock => b.type === 'tool_result');
}

async function loopOnce(tools: readonly ToolDefinition[], ctx: ToolContext, calls: Step, stage: Stage | null = null) {
  const model = new StepModel([calls, [textBlock('done')]]);
  const messages: ModelMessage[] = [{ role: 'user', content: 'go' }];
  const result = await runLoop({ model, system: 'test', tools, messages, ctx, agent: { name: 'tester', role: 'tester', stage }, maxTurns: 5 });
  return { model, messages, result };
}

// ---- bad arguments ------------------------------------------------------------------------------

type JsonProp = { type?: string | string[]; enum?: unknown[]; items?: JsonProp; minItems?: number };

function sample(prop: JsonProp | undefined): unknown {
  if (prop?.enum) return prop.enum[0];
  const type = Array.isArray(prop?.type) ? prop.type[0] : prop?.type;
  switch (type) {
    case 'integer':
    case 'number':
      return 1;
    case 'boolean':
      return true;
    case 'array':
      return [sample(prop?.items)];
    case 'object':
      return {};
    default:
      return 'value_ok';
  }
}

function wrongType(prop: JsonProp | undefined): unknown {
  const type = Array.isArray(prop?.type) ? prop.type[0] : prop?.type;
  switch (type) {
    case 'integer':
    case 'number':
      return 'seven';
    case 'boolean':
      return 'yes';
    case 'array':
      return 'not a list';
    case 'object':
      return 7;
    default:
      return 42;
  }
}

interface BadCase {
  label: string;
  input: unknown;
  /** What the error must name. */
  names: string;
}

function badCases(tool: ToolDefinition): BadCase[] {
  const schema = toolSpec(tool).input_schema as { properties?: Record<string, JsonProp>; required?: string[] };
  const props = schema.properties ?? {};
  const required = schema.required ?? [];
  const base = Object.fromEntries(required.map((key) => [key, sample(props[key])]));
  const cases: BadCase[] = [
    { label: 'null', input: null, names: '(root)' },
    { label: 'no input at all', input: undefined, names: '(root)' },
    { label: 'a string', input: 'oops', names: '(root)' },
    { label: 'an array', input: [1, 2], names: '(root)' },
  ];
  for (const key of required) {
    const { [key]: _dropped, ...rest } = base;
    cases.push({ label: `missing ${key}`, input: rest, names: key });
  }
  for (const [key, prop] of Object.entries(props)) {
    cases.push({ label: `${key}: null`, input: { ...base, [key]: null }, names: key });
    cases.push({ label: `${key}: wrong type`, input: { ...base, [key]: wrongType(prop) }, names: key });
  }
  return cases;
}

function fakeLead(ctx: ToolContext, called: string[]): LeadServices {
  const refuse = (what: string) => {
    called.push(what);
    throw new Error(`${what} must not be reached with bad arguments`);
  };
  return {
    lead: 'lead',
    post: async () => refuse('post'),
    createTask: async () => refuse('createTask'),
    tasks: () => ctx.board.list(),
    readTask: (id) => ctx.board.get(id),
    team: () => ctx.registry.read(),
    spawn: () => refuse('spawn'),
    requestShutdown: async () => refuse('requestShutdown'),
    decidePlan: async () => refuse('decidePlan'),
    takeUnread: () => refuse('takeUnread'),
  };
}

const teammateToolNames = [...TEAMMATE_TOOLS.keys()];
const leadToolNames = (() => {
  const probe = makeToolContext();
  try {
    return leadTools(fakeLead(probe.ctx, [])).map((tool) => tool.name);
  } finally {
    probe.cleanup();
  }
})();

it('LEAD_TOOL_NAMES names exactly the lead\'s tools (a hook matcher is checked against it)', () => {
  expect(leadToolNames).toEqual([...LEAD_TOOL_NAMES]);
});

describe('bad arguments are answered with is_error naming the problem, never thrown', () => {
  async function expectRefused(tool: ToolDefinition, context: TestContext) {
    const cases = badCases(tool);
    const calls = cases.map((c) => ({ ...toolUse(tool.name, {}), input: c.input }));
    const { model, messages, result } = await loopOnce([tool], context.ctx, calls);
    model.assertDone();
    expect(result.outcome).toEqual({ kind: 'end_turn', text: 'done' });
    // The second request carries the answers to every call of the first.
    const answers = lastResults(model.requests[1]!.messages);
    expect(answers.map((a) => a.tool_use_id)).toEqual(calls.map((c) => c.id));
    cases.forEach((c, i) => {
      const answer = answers[i]!;
      expect(answer.is_error, `${tool.name} with ${c.label}: ${answer.content}`).toBe(true);
      expect(answer.content).toMatch(new RegExp(`^Invalid arguments for ${tool.name}: `));
      expect(answer.content, `${tool.name} with ${c.label}`).toContain(c.names);
      expect(answer.content).toContain('Expected: {');
    });
    expect(messages).toHaveLength(4);
    expect(context.records).toEqual([]);
  }

  it.each(teammateToolNames)('teammate tool %s', async (name) => {
    const context = testContext();
    await expectRefused(TEAMMATE_TOOLS.get(name)!, context);
    expect(fs.readdirSync(context.workspace)).toEqual([]);
  });

  it.each(leadToolNames)('lead tool %s', async (name) => {
    const context = testContext();
    const called: string[] = [];
    const tool = leadTools(fakeLead(context.ctx, called)).find((t) => t.name === name)!;
    await expectRefused(tool, context);
    expect(called).toEqual([]);
    expect(context.ctx.board.list()).toEqual([]);
  });

  it('covers every tool: 26 teammate tools and 10 lead tools', () => {
    expect(teammateToolNames).toHaveLength(26);
    expect(leadToolNames).toHaveLength(10);
  });
});

// ---- gating -------------------------------------------------------------------------------------

describe('stage gating', () => {
  it('offers each tool once when a configured stage names one twice, or one it is always offered', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-tools-'));
    try {
      const tools = [...STAGE_DEFINITIONS.requirements.tools, 'bash', 'bash', 'send_message'];
      fs.writeFileSync(path.join(dir, CONFIG_FILE), JSON.stringify({ stages: { requirements: { tools } } }));
      const names = stageTools('requirements', StageRegistry.from(loadProjectConfig(dir).stages)).map((tool) => tool.name);
      expect(new Set(names).size).toBe(names.length);
      expect([...names].sort()).toEqual([...new Set([...STAGE_DEFINITIONS.requirements.tools, 'bash', ...COORDINATION_TOOL_NAMES])].sort());
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it.each(Object.keys(STAGE_DEFINITIONS) as Array<keyof typeof STAGE_DEFINITIONS>)('the %s agent is offered only its tools; any other tool is refused and runs nothing', async (stage) => {
    const context = testContext();
    const offered = [...STAGE_DEFINITIONS[stage].tools, ...COORDINATION_TOOL_NAMES];
    const tools = stageTools(stage);
    expect(tools.map((t) => t.name)).toEqual(offered);
    const foreign = teammateToolNames.filter((name) => !offered.includes(name));
    expect(foreign.length).toBeGreaterThan(5);
    const calls = foreign.map((name) => {
      const schema = toolSpec(TEAMMATE_TOOLS.get(name)!).input_schema as { properties?: Record<string, JsonProp>; required?: string[] };
      return toolUse(name, Object.fromEntries((schema.required ?? []).map((key) => [key, sample(schema.properties?.[key])])));
    });
    const { model } = await loopOnce(tools, context.ctx, calls, stage);
    expect(model.requests[0]!.tools.map((t) => t.name)).toEqual(offered);
    const answers = lastResults(model.requests[1]!.messages);
    answers.forEach((answer, i) => {
      expect(answer.is_error).toBe(true);
      expect(answer.content).toBe(`Unknown or unavailable tool '${foreign[i]}'. The tools you can use here are: ${offered.join(', ')}.`);
    });
    expect(context.records).toEqual([]);
    expect(fs.readdirSync(context.workspace)).toEqual([]);
    expect(context.ctx.board.list()).toEqual([]);
  });

  it('two signal tools in one response: both answered, only the first counts', async () => {
    const context = testContext();
    const calls = [toolUse('idle', { reason: 'nothing to review' }), toolUse('request_revision', { issues: ['x'] }), toolUse('read_file', { path: 'a.py' })];
    const model = new StepModel([calls]);
    const messages: ModelMessage[] = [{ role: 'user', content: 'go' }];
    const result = await runLoop({ model, system: 't', tools: stageTools('review'), messages, ctx: context.ctx, agent: { name: 'r', role: 'reviewer', stage: 'review' }, maxTurns: 5 });
    model.assertDone();
    expect(result.outcome).toEqual({ kind: 'idle', reason: 'nothing to review' });
    const answers = lastResults(messages);
    expect(answers.map((a) => a.tool_use_id)).toEqual(calls.map((c) => c.id));
    expect(answers[0]).toMatchObject({ content: 'Going idle.' });
    expect(answers[0]!.is_error).toBeUndefined();
    expect(answers[1]).toMatchObject({ is_error: true, content: 'Not run: idle already ended this task in the same response.' });
    expect(answers[2]).toMatchObject({ is_error: true, content: 'Not run: idle already ended this task in the same response.' });
  });
});

// ---- teammates on a real board ------------------------------------------------------------------

interface Setup {
  root: string;
  board: TaskBoard;
  pipeline: Pipeline;
}

async function setup(): Promise<Setup> {
  const root = tempRoot();
  const board = new TaskBoard(root);
  const mailbox = new Mailbox(root);
  await mailbox.registry.ensure('test');
  return { root, board, pipeline: new Pipeline(board, mailbox) };
}

/** Runs one in-process teammate until it has done its work and idled out (its own idle timeout). */
async function runTeammate(root: string, name: string, steps: Step[]): Promise<StepModel> {
  const model = new StepModel(steps);
  const teammate = new Teammate({
    name,
    role: name,
    rootDir: root,
    model,
    wake: new Wake(),
    signal: AbortSignal.timeout(HANG_MS),
    settings: { pollMs: 25, idleTimeoutMs: 400 },
  });
  const reason = await teammate.run();
  expect(reason).toMatch(/^idle for/);
  model.assertDone();
  return model;
}

/** A board snapshot that ignores the lease heartbeat. */
const snapshot = (board: TaskBoard) => board.list().map(({ lease: _lease, updatedAt: _updated, usage: _usage, ...task }) => task);

/** A pipeline whose review task (#2) waits for the reviewer, with main.py submitted. */
async function reviewReady(s: Setup): Promise<Task> {
  const first = await s.pipeline.post('Write a greeting program.', { startStage: 'implementation' });
  const claim = await s.board.claim(first.id, 'engineer');
  if (!claim.ok) throw new Error(claim.reason);
  fs.mkdirSync(s.pipeline.workspaceOf(1), { recursive: true });
  fs.writeFileSync(path.join(s.pipeline.workspaceOf(1), 'main.py'), '"""Greet."""\nprint("hi")\n');
  const advanced = await s.pipeline.advance(claim.task, { owner: 'engineer', token: claim.task.claims }, submission(s, 'main.py'));
  return advanced.next!;
}

/** A stage signal as its tool reports it. */
const sig = (tool: string, artifacts: Artifacts = {}, result = tool) => ({ tool, artifacts, result });

/** The submit_for_review signal for `file` as the workspace holds it now. */
function submission(s: Setup, file: string, revision = 0) {
  const files = snapshotWorkspace(s.root, s.pipeline.workspaceOf(1));
  return sig('submit_for_review', { submitted: { file, sha256: files[file]!, revision, files } }, `submitted ${file}`);
}

/** Runs the linter and the tests on the submitted main.py, the evidence every approval needs. */
const checked = [toolUse('run_linter', { file: 'main.py' }), toolUse('run_tests', { file: 'main.py' })];
const verdictAC1 = { id: 'AC1', met: true, evidence: 'the smoke run printed hi' };

describe('stage agents on a real board', () => {
  it('a call to another stage\'s tool changes nothing on the board or in the workspace', async () => {
    const s = await setup();
    await s.pipeline.post('Write a greeting program.');
    let before: unknown;
    let after: unknown;
    await runTeammate(s.root, 'analyst', [
      () => {
        before = snapshot(s.board);
        return [
          toolUse('write_file', { path: 'x.py', content: 'print(1)' }),
          toolUse('bash', { command: 'touch pwned' }),
          toolUse('submit_for_review', { file: 'x.py' }),
          toolUse('approve_code', { comment: 'ok' }),
          toolUse('request_revision', { issues: ['x'] }),
          toolUse('complete_task', { result: 'done' }),
          toolUse('claim_task', { task_id: 1 }),
        ];
      },
      (request: ModelRequest) => {
        after = snapshot(s.board);
        const answers = lastResults(request.messages);
        expect(answers).toHaveLength(7);
        for (const answer of answers) expect(answer).toMatchObject({ is_error: true, content: expect.stringMatching(/^Unknown or unavailable tool/) });
        return [
          toolUse('save_requirement', { key: 'goal', value: 'greet' }),
          toolUse('add_acceptance_criterion', { criterion: 'greets', verify: 'run it' }),
          toolUse('complete_requirements_analysis', { summary: 's' }),
        ];
      },
    ]);
    expect(after).toEqual(before);
    expect((before as Task[]).map((t) => `${t.id}:${t.status}:${t.owner}`)).toEqual(['1:in_progress:analyst']);
    expect(fs.readdirSync(path.join(s.root, 'workspace', '1'))).toEqual([]);
    expect(s.board.list().map((t) => `${t.stage}:${t.status}`)).toEqual(['requirements:completed', 'implementation:pending']);
  });

  it('approve_code then request_revision in one response: approved, no revision posted', async () => {
    const s = await setup();
    await reviewReady(s);
    await runTeammate(s.root, 'reviewer', [
      checked,
      [toolUse('approve_code', { comment: 'good', criteria: [verdictAC1] }), toolUse('request_revision', { issues: ['late'] })],
    ]);
    expect(s.board.list().map((t) => `${t.id}:${t.stage}:${t.status}`)).toEqual(['1:implementation:completed', '2:review:completed']);
    expect(s.board.get(2).artifacts).toMatchObject({ verdict: 'approved', comment: 'good', criteriaVerdicts: [verdictAC1] });
    expect(s.board.get(2).artifacts.issues).toBeUndefined();
    expect(s.pipeline.state(1).status).toBe('approved');
  });

  it('request_revision then approve_code in one response: a revision is posted, nothing approved', async () => {
    const s = await setup();
    await reviewReady(s);
    await runTeammate(s.root, 'reviewer', [[toolUse('request_revision', { issues: ['add tests'] }), toolUse('approve_code', { comment: 'good' })]]);
    expect(s.board.list().map((t) => `${t.id}:${t.stage}:${t.revision}:${t.status}`)).toEqual([
      '1:implementation:0:completed',
      '2:review:0:completed',
      '3:implementation:1:pending',
    ]);
    expect(s.board.get(2).artifacts).toMatchObject({ verdict: 'changes requested', issues: [{ text: 'add tests', severity: 'major' }] });
    expect(s.board.get(3).handoff).toContain('- [major] add tests');
    expect(s.pipeline.state(1).status).toBe('active');
  });

  it('complete_requirements_analysis without a saved requirement or an acceptance criterion is refused', async () => {
    const s = await setup();
    await s.pipeline.post('Write a greeting program.');
    let between: Array<Omit<Task, 'lease' | 'updatedAt' | 'usage'>> = [];
    await runTeammate(s.root, 'analyst', [
      [toolUse('complete_requirements_analysis', { summary: 'nothing yet' })],
      (request: ModelRequest) => {
        between = snapshot(s.board);
        const [refusal] = lastResults(request.messages);
        expect(refusal).toMatchObject({ is_error: true });
        expect(refusal!.content).toMatch(/^Not complete: no requirement saved yet.*; no acceptance criterion yet: call add_acceptance_criterion/);
        return [toolUse('save_requirement', { key: 'goal', value: 'greet' }), toolUse('complete_requirements_analysis', { summary: 'one' })];
      },
      (request: ModelRequest) => {
        const refusal = lastResults(request.messages).at(-1);
        expect(refusal).toMatchObject({ is_error: true, content: expect.stringMatching(/^Not complete: no acceptance criterion yet/) });
        return [toolUse('add_acceptance_criterion', { criterion: 'prints a greeting', verify: 'run it' }), toolUse('complete_requirements_analysis', { summary: 'one' })];
      },
    ]);
    expect(between.map((t) => `${t.id}:${t.status}`)).toEqual(['1:in_progress']);
    expect(s.board.list().map((t) => `${t.stage}:${t.status}`)).toEqual(['requirements:completed', 'implementation:pending']);
    expect(s.board.get(2).handoff).toContain('- goal: greet');
    expect(s.board.get(2).handoff).toContain('- [AC1] prints a greeting (verify: run it)');
    expect(s.board.get(2).artifacts.criteria).toEqual([{ id: 'AC1', criterion: 'prints a greeting', verify: 'run it' }]);
  });

  it('submit_for_review of a missing file (or one outside the workspace) is refused', async () => {
    const s = await setup();
    await s.pipeline.post('Write a greeting program.', { startStage: 'implementation' });
    fs.writeFileSync(path.join(s.root, 'outside.py'), 'print(1)\n');
    let between: Array<Omit<Task, 'lease' | 'updatedAt' | 'usage'>> = [];
    await runTeammate(s.root, 'engineer', [
      [toolUse('submit_for_review', { file: 'missing.py' }), toolUse('submit_for_review', { file: '../../outside.py' })],
      (request: ModelRequest) => {
        between = snapshot(s.board);
        const answers = lastResults(request.messages);
        expect(answers[0]).toMatchObject({ is_error: true, content: "no file 'missing.py' in the workspace (files: none); write it first" });
        // Refused by the workspace confinement (the same as read_file), before any existence check.
        expect(answers[1]).toMatchObject({ is_error: true, content: expect.stringMatching(/outside\.py.*workspace|workspace.*outside\.py/s) });
        return [toolUse('write_file', { path: 'main.py', content: '"""Greet."""\nprint("hi")\n' }), toolUse('submit_for_review', { file: 'main.py' })];
      },
    ]);
    expect(between.map((t) => `${t.id}:${t.status}`)).toEqual(['1:in_progress']);
    expect(s.board.list().map((t) => `${t.stage}:${t.status}`)).toEqual(['implementation:completed', 'review:pending']);
    expect(s.board.get(2).artifacts.submitted).toMatchObject({ file: 'main.py' });
  });
});

// ---- the pipeline state machine -----------------------------------------------------------------

describe('Pipeline state machine', () => {
  async function claimed(s: Setup, id: number, owner: string) {
    const claim = await s.board.claim(id, owner);
    if (!claim.ok) throw new Error(claim.reason);
    return { task: claim.task, fence: { owner, token: claim.task.claims } };
  }

  it('post: a requirements task for the analyst, a new pipeline id each time; blank is refused', async () => {
    const s = await setup();
    const first = await s.pipeline.post('  Build a thing.  ');
    expect(first).toMatchObject({ id: 1, stage: 'requirements', role: 'analyst', pipeline: 1, revision: 0, status: 'pending', handoff: '', description: 'Build a thing.' });
    expect(first.artifacts).toEqual({ requirement: 'Build a thing.', requirements: {} });
    const second = await s.pipeline.post('Another.', { startStage: 'implementation' });
    expect(second).toMatchObject({ stage: 'implementation', role: 'engineer', pipeline: 2 });
    expect(second.handoff).toContain('Original requirement: Another.');
    // Skipping the analyst: the requirement itself is the one criterion an approval must meet.
    expect(second.handoff).toContain('- [AC1] The program does what was asked: Another.');
    await expect(s.pipeline.post('   ')).rejects.toMatchObject({ code: 'INVALID_REQUIREMENT' });
    expect(s.pipeline.pipelines()).toEqual([1, 2]);
    expect(s.pipeline.state(1)).toMatchObject({ id: 1, status: 'active', revisions: 0 });
  });

  it('advance: requirements → implementation → review → implementation r1 → review r1 → approved, lead told', async () => {
    const s = await setup();
    await s.pipeline.post('Greet.');
    let { task, fence } = await claimed(s, 1, 'analyst');
    await s.board.update(1, { artifacts: { ...task.artifacts, requirements: { goal: 'greet' } } }, { fence, event: 'saved' });
    const toImpl = await s.pipeline.advance(task, fence, sig('complete_requirements_analysis', { summary: 'sum' }, 'sum'));
    expect(toImpl).toMatchObject({ ok: true, status: 'active', next: { id: 2, stage: 'implementation', revision: 0, role: 'engineer' } });
    expect(s.board.get(1)).toMatchObject({ status: 'completed', result: 'sum' });
    expect(toImpl.next!.handoff).toContain('- goal: greet');
    expect(toImpl.next!.artifacts).toMatchObject({ requirements: { goal: 'greet' }, summary: 'sum', from: 1 });

    ({ task, fence } = await claimed(s, 2, 'engineer'));
    fs.mkdirSync(s.pipeline.workspaceOf(1), { recursive: true });
    fs.writeFileSync(path.join(s.pipeline.workspaceOf(1), 'g.py'), 'print("hi")\n');
    const toReview = await s.pipeline.advance(task, fence, submission(s, 'g.py'));
    expect(toReview.next).toMatchObject({ id: 3, stage: 'review', revision: 0, role: 'reviewer' });
    expect(toReview.next!.handoff).toContain('print("hi")');
    expect(s.board.get(2).artifacts.submitted).toMatchObject({ file: 'g.py', revision: 0, sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });

    ({ task, fence } = await claimed(s, 3, 'reviewer'));
    const issues = [{ text: 'add a docstring', severity: 'major' as const }];
    const toRevision = await s.pipeline.advance(task, fence, sig('request_revision', { verdict: 'changes requested', issues }));
    expect(toRevision.next).toMatchObject({ id: 4, stage: 'implementation', revision: 1 });
    expect(toRevision.next!.handoff).toMatch(/This is revision 1\. The reviewer sent the work back with these issues:\n- \[major\] add a docstring/);
    expect(s.pipeline.state(1)).toMatchObject({ status: 'active', revisions: 1 });

    ({ task, fence } = await claimed(s, 4, 'engineer'));
    fs.writeFileSync(path.join(s.pipeline.workspaceOf(1), 'g.py'), '"""Greet."""\nprint("hi")\n');
    const toReview1 = await s.pipeline.advance(task, fence, submission(s, 'g.py', 1));
    expect(toReview1.next).toMatchObject({ id: 5, stage: 'review', revision: 1 });
    // The re-review sees what the last review asked for and the change since.
    expect(toReview1.next!.artifacts.previousIssues).toEqual(issues);
    expect(toReview1.next!.handoff).toContain('+"""Greet."""');

    ({ task, fence } = await claimed(s, 5, 'reviewer'));
    const approved = await s.pipeline.advance(task, fence, sig('approve_code', { verdict: 'approved', comment: 'lgtm' }, 'lgtm'));
    expect(approved).toEqual({ ok: true, status: 'approved', next: null });
    expect(s.pipeline.state(1)).toMatchObject({ status: 'approved', revisions: 1 });
    expect(s.pipeline.state(1).tasks).toHaveLength(5);
    const inbox = new Mailbox(s.root).peek('lead');
    expect(inbox).toEqual([expect.objectContaining({ type: 'pipeline_update', from: 'reviewer', pipeline: 1, status: 'approved', content: 'Pipeline #1 approved: lgtm' })]);
  });

  it('request_revision past max_revisions fails the pipeline with the reason and tells the lead', async () => {
    const s = await setup();
    const pipeline = new Pipeline(s.board, new Mailbox(s.root), { maxRevisions: 0 });
    const review = await reviewReady(s);
    const { task, fence } = await claimed(s, review.id, 'reviewer');
    const issues = [
      { text: 'a', severity: 'major' as const },
      { text: 'b', severity: 'blocker' as const },
    ];
    const result = await pipeline.advance(task, fence, sig('request_revision', { verdict: 'changes requested', issues }));
    expect(result).toEqual({ ok: true, status: 'failed', next: null, reason: 'max_revisions (0) reached; the reviewer still found 2 issues' });
    expect(s.board.get(review.id)).toMatchObject({ status: 'failed', result: result.reason, artifacts: expect.objectContaining({ verdict: 'changes requested', issues }) });
    expect(pipeline.state(1)).toMatchObject({ status: 'failed', reason: result.reason });
    expect(new Mailbox(s.root).peek('lead').at(-1)).toMatchObject({ type: 'pipeline_update', status: 'failed' });
  });

  it('fail: the task and the pipeline fail with the reason; the lead is told', async () => {
    const s = await setup();
    await s.pipeline.post('Greet.');
    const { task, fence } = await claimed(s, 1, 'analyst');
    const result = await s.pipeline.fail(task, fence, 'max turns (3) reached');
    expect(result).toEqual({ ok: true, status: 'failed', next: null, reason: 'max turns (3) reached' });
    expect(s.pipeline.state(1)).toMatchObject({ status: 'failed', reason: 'max turns (3) reached' });
    expect(new Mailbox(s.root).peek('lead')).toEqual([
      expect.objectContaining({ type: 'pipeline_update', status: 'failed', content: 'Pipeline #1 failed at requirements #1: max turns (3) reached' }),
    ]);
  });

  it('advance refuses a signal of another stage, a non-stage task, and a stale claim (writing nothing)', async () => {
    const s = await setup();
    await s.pipeline.post('Greet.');
    const { task, fence } = await claimed(s, 1, 'analyst');
    await expect(s.pipeline.advance(task, fence, sig('approve_code'))).rejects.toMatchObject({ code: 'BAD_TRANSITION' });
    const general = await s.board.create({ subject: 'general' });
    await expect(s.pipeline.advance(general, fence, sig('approve_code'))).rejects.toMatchObject({ code: 'NOT_A_STAGE_TASK' });
    await s.board.update(1, { artifacts: { ...task.artifacts, requirements: { goal: 'greet' } } }, { fence });
    const stale = await s.pipeline.advance(task, { owner: 'analyst', token: fence.token + 1 }, sig('complete_requirements_analysis', { summary: 's' }));
    expect(stale.ok).toBe(false);
    expect(s.board.list().map((t) => `${t.id}:${t.status}`)).toEqual(['1:in_progress', '2:pending']);
  });

  it('pipeline ids are unique across concurrent posts (same process and worker threads)', async () => {
    const s = await setup();
    const PER = 8;
    const bootstrap = new URL('../helpers/ts-worker.mjs', import.meta.url);
    const entry = new URL('../helpers/pipeline-poster.ts', import.meta.url).href;
    const workers = [0, 1, 2].map((n) => new Worker(bootstrap, { workerData: { entry, root: s.root, count: PER, label: `w${n}` } }));
    const results = workers.map(
      (worker) =>
        new Promise<number[]>((resolve, reject) => {
          worker.on('message', (m: { ready?: boolean; ids?: number[]; error?: string }) => {
            if (m.ids) resolve(m.ids);
            if (m.error) reject(new Error(m.error));
          });
          worker.on('error', reject);
        }),
    );
    await Promise.all(workers.map((worker) => new Promise<void>((resolve) => worker.once('message', () => resolve()))));
    for (const worker of workers) worker.postMessage('go');
    const local = Promise.all(Array.from({ length: PER }, (_, i) => new Pipeline(new TaskBoard(s.root), new Mailbox(s.root)).post(`local ${i}`)));
    const [remote, mine] = await Promise.all([Promise.all(results), local]);
    await Promise.all(workers.map((worker) => worker.terminate()));
    const ids = [...remote.flat(), ...mine.map((task) => task.pipeline!)].sort((a, b) => a - b);
    expect(ids).toEqual(Array.from({ length: PER * 4 }, (_, i) => i + 1));
    // One task per pipeline, and its id is the pipeline's.
    expect(s.board.list().map((task) => task.pipeline).sort((a, b) => a! - b!)).toEqual(ids);
  });
});

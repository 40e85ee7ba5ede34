/**
 * autoteam.config.json: `autoteam init` writes the defaults, which change nothing; a model per role;
 * stage prompts and tools that reach the teammates; limits under the environment and the flags; and
 * every mistake named by file and key path.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CONFIG_FILE, defaultProjectConfig, loadProjectConfig, modelSpecs } from '../../src/core/config/project-config.js';
import { STAGE_DEFINITIONS } from '../../src/core/stages/definitions.js';
import { MessagesServer } from '../helpers/messages-server.js';
import { DOWNLOADS_REQUIREMENT, describeRun, readTasks, runCli, tempBoard } from '../helpers/pipeline-cli.js';
import { TeamPlayer } from '../helpers/pipeline-roles.js';

const python = spawnSync('python3', ['--version']).status === 0;
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});
function folder(config?: unknown): string {
  const dir = tempBoard('autoteam-config-');
  dirs.push(dir);
  if (config !== undefined) fs.writeFileSync(path.join(dir, CONFIG_FILE), typeof config === 'string' ? config : JSON.stringify(config));
  return dir;
}

describe('autoteam.config.json', () => {
  it('`autoteam init` writes the defaults: the team, every stage as built in, the limits', async () => {
    const dir = folder();
    const init = await runCli(['init', '--dir', dir], { cwd: dir });
    expect(init.code, describeRun(init)).toBe(0);
    const written = JSON.parse(fs.readFileSync(path.join(dir, CONFIG_FILE), 'utf8'));
    expect(written).toEqual(JSON.parse(JSON.stringify(defaultProjectConfig())));
    const loaded = loadProjectConfig(dir);
    expect(loaded.team?.map((m) => m.role)).toEqual(['analyst', 'engineer', 'reviewer']);
    expect(loaded.stages.review).toMatchObject({ prompt: STAGE_DEFINITIONS.review.systemPrompt, tools: [...STAGE_DEFINITIONS.review.tools] });
    expect(loaded.stages.review?.signals).toEqual({ request_revision: { next: 'implementation', revise: true, carry: ['issues', 'submitted'] }, approve_code: { next: 'approved' } });
    expect(loaded.warnings).toEqual([]);
    expect(loaded.leadTools).toEqual(['bash', 'read_file', 'write_file', 'edit_file']);
    expect(loaded.limitsEnv).toEqual({ MAX_REVISIONS: '3', MAX_TURNS: '30', MAX_QUESTIONS: '8', MAX_PIPELINE_STEPS: '60', TOKEN_BUDGET_PIPELINE: '500000' });
    const again = await runCli(['init', '--dir', dir], { cwd: dir });
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/already exists/);
  });

  it.runIf(python)('with the defaults written out, an offline run ends as it does without the file', async () => {
    const dir = folder(defaultProjectConfig());
    const run = await runCli(['run', '--auto', '--dir', dir, DOWNLOADS_REQUIREMENT], { cwd: dir });
    expect(run.code, describeRun(run)).toBe(0);
    expect(run.stdout).toMatch(/pipeline #1: APPROVED/);
    expect(readTasks(dir).map((t) => `${t.stage}/${t.revision}/${t.owner}`)).toEqual([
      'requirements/0/analyst',
      'implementation/0/engineer',
      'review/0/reviewer',
      'implementation/1/engineer',
      'review/1/reviewer',
    ]);
  });

  it('names the file and the key path of every mistake', () => {
    const cases: Array<[unknown, RegExp]> = [
      ['{ not json', /autoteam\.config\.json: not valid JSON \(.* at line 1, column 3\)/],
      ['{\n  "limits": {\n    "maxRevisions": 2,\n  }\n}\n', /autoteam\.config\.json: not valid JSON \(Expected double-quoted property name at line 4, column 3\)/],
      ['{\n  "limits": {\n', /autoteam\.config\.json: not valid JSON \(it ends early, at line 3, column 1\)/],
      // Node 20 gives no position for these, only the text around: the place is found by scanning.
      ['{"team": [{"name": "a", "role": "analyst"},\n  ]\n}', /autoteam\.config\.json: not valid JSON \(Unexpected token '\]' at line 2, column 3\)$/],
      ['{\n  "web": flase\n}', /autoteam\.config\.json: not valid JSON \(Unexpected token 'l' at line 2, column 11\)$/],
      [{ models: { analyst: { provider: 'gemini' } } }, /autoteam\.config\.json: models\.analyst\.provider: Invalid option/],
      [{ models: { tester: { model: 'x' } } }, /models\.tester: not 'default', and unknown role 'tester' \(roles: /],
      [{ models: { reveiwer: { model: 'x' } } }, /models\.reveiwer: not 'default', and unknown role 'reveiwer' — did you mean reviewer\? \(roles: /],
      [{ team: [{ name: 'a', role: 'enginer' }] }, /team\.0\.role: unknown role 'enginer' — did you mean engineer\? \(roles: /],
      [{ team: [{ name: 'a', role: 'engineer' }, { name: 'a', role: 'reviewer' }] }, /team: the name 'a' is given twice/],
      // The lead's name: the teammate would be refused at start, and `run` wait for a role nobody works.
      [{ team: [{ name: 'analyst', role: 'analyst' }, { name: 'lead', role: 'engineer' }] }, /team\.1\.name: 'lead' is the team lead's name; choose another$/],
      // Names that differ only in case would share an inbox file on a case-insensitive disk.
      [{ team: [{ name: 'Eng', role: 'engineer' }, { name: 'eng', role: 'reviewer' }] }, /team: the names 'Eng' and 'eng' differ only in case; names must differ in more than case \(a case-insensitive disk, as macOS's, keeps one inbox file for both\)$/],
      [{ team: [{ name: 'Lead', role: 'engineer' }] }, /team\.0\.name: 'Lead' differs from the team lead's name 'lead' only in case; choose another$/],
      [{ stages: { review: { tools: ['run_linter', 'approve_code'] } } }, /stages\.review\.tools: must include the stage's signal tool request_revision/],
      [{ stages: { review: { tools: ['run_linter', 'rm_rf', 'approve_code', 'request_revision'] } } }, /stages\.review\.tools\.1: no tool named 'rm_rf'/],
      [{ stages: { analysis: {} } }, /stages\.analysis\.role: a new stage needs the role that works it$/],
      [{ stages: { implementaton: { prompt: 'p' } } }, /stages\.implementaton\.role: a new stage needs the role that works it \(or did you mean the stage implementation\?\)$/],
      [{ stages: { docs: { role: 'writer', prompt: 'Write docs.', tools: ['write_file', 'complete_stage'], signals: { complete_stage: { next: 'publish' } } } } }, /stages\.docs\.signals\.complete_stage\.next: no stage 'publish'/],
      [{ stages: { docs: { role: 'writer', prompt: 'Write docs.', tools: ['write_file'], signals: { complete_stage: { next: 'approved' } } } } }, /stages\.docs\.tools: must include the stage's signal tool complete_stage/],
      [{ stages: { review: { signals: { complete_stage: { next: 'approved' } } } } }, /stages\.review\.signals\.complete_stage: the review stage's signals are request_revision, approve_code/],
      [{ stages: { implementation: { promptFile: 'nope.md' } } }, /stages\.implementation\.promptFile: .*nope\.md does not exist/],
      [{ limits: { maxRevisions: -1 } }, /limits\.maxRevisions: a number of at least 0 is expected$/],
      [{ stages: { review: { tools: [] } } }, /stages\.review\.tools: an array of at least 1 items is expected$/],
      [{ limits: { maxTurns: 1.5 } }, /limits\.maxTurns: a whole number is expected$/],
      [{ limits: { maxTurns: '3' } }, /limits\.maxTurns: a number is expected, not a string$/],
      [{ stages: { implementation: { promptFile: '.' } } }, /stages\.implementation\.promptFile: .* is not a file/],
      [{ stages: { review: { signals: { approve_code: { next: 'approved', carry: ['submited'] } } } } }, /stages\.review\.signals\.approve_code\.carry\.0: no artifact 'submited'/],
      [{ stages: { docs: { role: 'writer', prompt: 'p', tools: ['complete_stage'], signals: { complete_stage: { next: 'docs' } } } } }, /stages\.docs\.signals\.complete_stage\.next: a stage cannot lead to itself/],
      [{ colour: 'blue' }, /\(root\): Unrecognized key: "colour"$/],
      [{ autoMerj: true }, /\(root\): Unrecognized key: "autoMerj" — did you mean autoMerge\?$/],
      [{ limits: { maxRevison: 2 } }, /limits: Unrecognized key: "maxRevison" — did you mean limits\.maxRevisions\?$/],
      [{ team: [{ name: 'a', role: 'analyst', cout: 2 }] }, /team\.0: Unrecognized key: "cout" — did you mean team\.0\.count\?$/],
      [{ limits: { autoMerge: true } }, /limits: Unrecognized key: "autoMerge" — autoMerge goes at the top level of the file, not in limits$/],
      // Each hint right after its own mistake.
      [{ autoMerj: true, limits: { maxRevison: 2 } }, /limits: Unrecognized key: "maxRevison" — did you mean limits\.maxRevisions\?; \(root\): Unrecognized key: "autoMerj" — did you mean autoMerge\?$/],
      [{ limits: { maxTurn: 3, maxRevison: 2 } }, /limits: Unrecognized keys: "maxTurn", "maxRevison" — did you mean limits\.maxTurns for maxTurn\? did you mean limits\.maxRevisions for maxRevison\?$/],
      [{ lead: { tools: ['bash', 'rm'] } }, /lead\.tools\.1: Invalid option: expected one of "bash"\|"read_file"\|"write_file"\|"edit_file"/],
    ];
    for (const [config, error] of cases) expect(() => loadProjectConfig(folder(config)), JSON.stringify(config)).toThrow(error);
    // A folder of that name (made by hand, or merged from elsewhere): said as that, not as EISDIR.
    const dir = folder();
    fs.mkdirSync(path.join(dir, CONFIG_FILE));
    expect(() => loadProjectConfig(dir)).toThrow(`${path.join(dir, CONFIG_FILE)}: is a folder, not a file: move it away to start`);
  });

  it('tasks, show and events still read the board under a broken config, and warn of it once on stderr; status refuses it', async () => {
    const dir = folder({ limits: { maxRevison: 2 } });
    const warning = /^autoteam: warning: .*autoteam\.config\.json: limits: Unrecognized key: "maxRevison" — did you mean limits\.maxRevisions\? \(the commands that run or change the team, such as run, post, worker and the REPL, refuse it until it is mended\)$/m;
    const posted = await runCli(['post', 'Write a word counter', '--dir', dir], { cwd: dir });
    expect(posted.code, describeRun(posted)).toBe(2);
    fs.writeFileSync(path.join(dir, CONFIG_FILE), '{}');
    expect((await runCli(['post', 'Write a word counter', '--dir', dir], { cwd: dir })).code).toBe(0);
    fs.writeFileSync(path.join(dir, CONFIG_FILE), JSON.stringify({ limits: { maxRevison: 2 } }));
    for (const args of [['tasks'], ['tasks', '--json'], ['show', '1'], ['events']]) {
      const run = await runCli([...args, '--dir', dir], { cwd: dir });
      expect(run.code, describeRun(run)).toBe(0);
      expect(run.stderr.match(new RegExp(warning.source, 'gm')), describeRun(run)).toHaveLength(1);
      expect(run.stdout, describeRun(run)).toMatch(/Write a word counter/);
    }
    const status = await runCli(['status', '--dir', dir], { cwd: dir });
    expect(status.code).toBe(2);
    expect(status.stderr).toMatch(/maxRevison/);
  });

  it('chooses a model per role; --provider / --model on the command line choose for every role', () => {
    const project = loadProjectConfig(folder({ models: { default: { provider: 'offline' }, reviewer: { provider: 'openai', model: 'qwen2.5-coder' } } }));
    const env = { OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1' };
    const { model, models } = modelSpecs(env, project);
    expect(model.kind).toBe('offline');
    expect(models).toEqual({ reviewer: { kind: 'openai', model: 'qwen2.5-coder', baseURL: 'http://127.0.0.1:11434/v1' } });
    const cli = modelSpecs(env, project, { provider: 'openai', model: 'llama3.1' });
    expect(cli).toEqual({ model: { kind: 'openai', model: 'llama3.1', baseURL: 'http://127.0.0.1:11434/v1' }, models: {} });
    // A replay answers with its recorded calls: a model named beside it is refused, not ignored; the config's models are not a choice of the command line.
    expect(() => modelSpecs(env, project, { replay: '/tmp/calls', model: 'llama3.1' })).toThrow('--replay and --model contradict each other: a replay answers with the recorded calls, not a model; give one');
    expect(() => modelSpecs(env, project, { replay: '/tmp/calls', provider: 'openai' })).toThrow(/^--replay and --provider contradict/);
    expect(modelSpecs(env, project, { replay: '/tmp/calls' })).toEqual({ model: { kind: 'replay', dir: '/tmp/calls' }, models: {} });
    const broken = loadProjectConfig(folder({ models: { engineer: { provider: 'anthropic' } } }));
    expect(() => modelSpecs({}, broken)).toThrow(/autoteam\.config\.json: models\.engineer: provider anthropic needs ANTHROPIC_API_KEY/);
  });

  // Two runs on a model, one after the other: twice a pipeline's time (180 s is for one).
  it.runIf(python)('stage prompts and limits reach the teammates; the environment still wins over the file', { timeout: 360_000 }, async () => {
    const extra = 'Always write British English in comments.';
    const server = await MessagesServer.start(new TeamPlayer().steps());
    const dir = folder({ stages: { engineer: undefined, implementation: { prompt: `${STAGE_DEFINITIONS.implementation.systemPrompt}\n${extra}` } }, limits: { maxPipelineSteps: 2 } });
    try {
      const limited = await runCli(['run', '--auto', '--dir', dir, DOWNLOADS_REQUIREMENT], { cwd: dir, env: { ANTHROPIC_API_KEY: 'test-key-config', ANTHROPIC_BASE_URL: server.url } });
      expect(limited.code, describeRun(limited)).toBe(1);
      expect(limited.stdout).toMatch(/step budget used up: pipeline #1 made 2 of 2 model calls/);
    } finally {
      await server.close();
    }
    const second = await MessagesServer.start(new TeamPlayer().steps());
    const dir2 = folder({ stages: { implementation: { prompt: `${STAGE_DEFINITIONS.implementation.systemPrompt}\n${extra}` } }, limits: { maxPipelineSteps: 2 } });
    try {
      const run = await runCli(['run', '--auto', '--dir', dir2, DOWNLOADS_REQUIREMENT], {
        cwd: dir2,
        env: { ANTHROPIC_API_KEY: 'test-key-config', ANTHROPIC_BASE_URL: second.url, MAX_PIPELINE_STEPS: '60' },
      });
      expect(run.code, describeRun(run)).toBe(0);
      const engineer = second.requests.filter((r) => JSON.stringify(r.body.system ?? '').includes('You are the engineer'));
      expect(engineer.length).toBeGreaterThan(0);
      for (const request of engineer) expect(JSON.stringify(request.body.system)).toContain(extra);
      const stages = await runCli(['stages', '--dir', dir2], { cwd: dir2 });
      expect(stages.stdout).toContain(extra);
    } finally {
      await second.close();
    }
  });
});

describe.runIf(python)('a stage of its own: docs after review, worked by a writer', () => {
  const WRITER = 'You are the technical writer of the team. Write a README.md for the approved program, then complete_stage(report).';
  const config = {
    team: [
      { name: 'analyst', role: 'analyst' },
      { name: 'engineer', role: 'engineer' },
      { name: 'reviewer', role: 'reviewer' },
      { name: 'writer', role: 'writer' },
    ],
    stages: {
      review: { signals: { approve_code: { next: 'docs', carry: ['submitted'] } } },
      docs: { role: 'writer', title: 'Document', prompt: WRITER, tools: ['read_file', 'write_file', 'complete_stage', 'fail_task'], signals: { complete_stage: { next: 'approved' } } },
    },
  };

  it('runs end to end on a model: the writer gets the approved file, writes the README, and only then is the pipeline approved', async () => {
    const player = new TeamPlayer();
    const team = player.steps();
    const writerCalls: Array<{ system: string; messages: unknown[] }> = [];
    const steps = team.map((step) => (request: Parameters<Extract<typeof step, Function>>[0], context: Parameters<Extract<typeof step, Function>>[1]) => {
      const system = JSON.stringify(request.body?.system ?? '');
      if (!system.includes('technical writer')) return (step as Extract<typeof step, Function>)(request, context);
      writerCalls.push({ system, messages: request.body.messages });
      const results = (request.body.messages as Array<{ content: unknown }>).flatMap((m) => (Array.isArray(m.content) ? m.content : [])).filter((b: { type?: string }) => b.type === 'tool_result');
      const content =
        results.length === 0
          ? [{ type: 'tool_use', id: 'toolu_w1', name: 'write_file', input: { path: 'README.md', content: '# organize.py\n\nSorts a folder into subfolders by file type.\n' } }]
          : [{ type: 'tool_use', id: 'toolu_w2', name: 'complete_stage', input: { report: 'README.md written for organize.py.' } }];
      return { status: 200, body: { id: `msg_w${results.length}`, type: 'message', role: 'assistant', model: 'claude-sonnet-5-5', content, stop_reason: 'tool_use', stop_sequence: null, usage: { input_tokens: 50, output_tokens: 10 } } };
    });
    const server = await MessagesServer.start(steps);
    const dir = folder(config);
    try {
      const run = await runCli(['run', '--auto', '--dir', dir, DOWNLOADS_REQUIREMENT], { cwd: dir, env: { ANTHROPIC_API_KEY: 'test-key-custom', ANTHROPIC_BASE_URL: server.url } });
      expect(run.code, describeRun(run)).toBe(0);
      expect(run.stdout).toMatch(/pipeline #1: APPROVED/);
      const tasks = readTasks(dir);
      expect(tasks.map((t) => `${t.stage}/${t.owner}/${t.status}`)).toEqual(['requirements/analyst/completed', 'implementation/engineer/completed', 'review/reviewer/completed', 'docs/writer/completed']);
      expect(tasks[2]!.artifacts.final).toBeUndefined();
      expect(tasks[3]!).toMatchObject({ subject: expect.stringMatching(/^Document: Write a Python script/), artifacts: { final: true, reports: { docs: 'README.md written for organize.py.' } } });
      expect(tasks[3]!.handoff).toMatch(/Submitted and approved: organize\.py/);
      expect(fs.readFileSync(path.join(dir, 'workspace', '1', 'README.md'), 'utf8')).toMatch(/^# organize\.py/);
      expect(writerCalls.length).toBe(2);
      expect(writerCalls[0]!.system).toContain('technical writer');
      const stages = await runCli(['stages', '--dir', dir], { cwd: dir });
      expect(stages.stdout).toMatch(/== docs \(Document\) — role: writer/);
      expect(stages.stdout).toMatch(/approve_code → docs/);
    } finally {
      await server.close();
    }
  });

  it('the offline model says in one line that it has no policy for the stage, and the pipeline fails there', async () => {
    const dir = folder(config);
    const run = await runCli(['run', '--auto', '--dir', dir, DOWNLOADS_REQUIREMENT], { cwd: dir });
    expect(run.code, describeRun(run)).toBe(1);
    expect(run.stdout).toMatch(/pipeline #1: FAILED — the offline model has no policy for the 'docs' stage — set ANTHROPIC_API_KEY, or OPENAI_API_KEY \/ OPENAI_BASE_URL/);
    expect(readTasks(dir).at(-1)).toMatchObject({ stage: 'docs', owner: 'writer', status: 'failed' });
  });
});

describe('what the config allows but probably does not mean', () => {
  it('warns of a stage nobody on the team works, and of a stage no signal leads to; a byte-order mark is fine', async () => {
    const dir = folder(
      `\uFEFF${JSON.stringify({
        team: [{ name: 'analyst', role: 'analyst' }, { name: 'engineer', role: 'engineer' }],
        stages: { orphan: { role: 'writer', prompt: 'p', tools: ['complete_stage'], signals: { complete_stage: { next: 'approved' } } } },
      })}`,
    );
    expect(loadProjectConfig(dir).warnings).toEqual([
      'stages.orphan: no signal leads to this stage, so no task of it is ever posted',
      "stages.review: no teammate in team has the role 'reviewer'; its tasks wait until one joins (autoteam worker --role reviewer)",
    ]);
    // Each is said at start as a warning, not in the words of an error that stops autoteam; it goes on.
    const lead = await runCli(['--no-team', '--dir', dir], { cwd: dir, input: '/quit\n' });
    expect(lead.code, describeRun(lead)).toBe(0);
    const file = path.join(dir, 'autoteam.config.json');
    expect(lead.stderr.split('\n').filter((line) => line.includes('stages.'))).toEqual([
      `autoteam: warning: ${file}: stages.orphan: no signal leads to this stage, so no task of it is ever posted`,
      `autoteam: warning: ${file}: stages.review: no teammate in team has the role 'reviewer'; its tasks wait until one joins (autoteam worker --role reviewer)`,
    ]);
  });

  it('warns of a stage that submits files with no write_file among its tools', async () => {
    const dir = folder(JSON.stringify({ stages: { implementation: { tools: ['read_file', 'bash', 'submit_for_review', 'fail_task'] } } }));
    expect(loadProjectConfig(dir).warnings).toEqual([
      "stages.implementation.tools: no write_file, so the files submit_for_review submits can be written only through bash (the offline model's engineer cannot write them)",
    ]);
    // With it, nothing is said.
    expect(loadProjectConfig(folder(JSON.stringify({ stages: { implementation: { tools: ['read_file', 'write_file', 'submit_for_review', 'fail_task'] } } }))).warnings).toEqual([]);
  });

  it('a role the team lacks is not said to have no one when a flag gives it one (--engineers 1)', async () => {
    const dir = folder(JSON.stringify({ team: [{ name: 'analyst', role: 'analyst' }, { name: 'reviewer', role: 'reviewer' }] }));
    const unstaffed = (stderr: string) => stderr.split('\n').filter((line) => line.includes("no teammate in team has the role 'engineer'"));
    const bare = await runCli(['--no-team', '--dir', dir], { cwd: dir, input: '/quit\n' });
    expect(bare.code, describeRun(bare)).toBe(0);
    expect(unstaffed(bare.stderr)).toHaveLength(1);
    const staffed = await runCli(['--engineers', '1', '--dir', dir], { cwd: dir, input: '/quit\n' });
    expect(staffed.code, describeRun(staffed)).toBe(0);
    expect(unstaffed(staffed.stderr)).toEqual([]);
  });

  it('a role a count of 0 empties is said once, by the count, not again by the stage check', () => {
    const dir = folder(JSON.stringify({ team: [{ name: 'analyst', role: 'analyst' }, { name: 'engineer', role: 'engineer', count: 0 }, { name: 'reviewer', role: 'reviewer' }] }));
    expect(loadProjectConfig(dir).warnings).toEqual([]);
  });
});

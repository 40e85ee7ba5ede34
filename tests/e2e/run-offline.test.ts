/**
 * `autoteam run` end to end: the real built CLI, worker threads, the offline scripted team, the real
 * tools (python3 linter, smoke tests) and the board on disk. Build first: `npx tsc -p tsconfig.build.json`.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Task } from '../../src/core/board/schemas.js';
import { COORDINATION_TOOL_NAMES, STAGE_DEFINITIONS } from '../../src/core/stages/definitions.js';
import { CliChild } from '../helpers/cli-child.js';
import { MessagesServer } from '../helpers/messages-server.js';
import {
  type CliResult,
  cleanEnv,
  cliEntry,
  DOWNLOADS_REQUIREMENT,
  describeRun,
  readTasks,
  runCli,
  sha256,
  tempBoard,
} from '../helpers/pipeline-cli.js';

const roots: string[] = [];
function board(): string {
  const root = tempBoard();
  roots.push(root);
  return root;
}
afterAll(() => {
  for (const root of roots) fs.rmSync(root, { recursive: true, force: true });
});

const python = spawnSync('python3', ['--version']).status === 0;

describe.runIf(python)('autoteam run --auto, offline: the canonical five-task story', () => {
  let root = '';
  let run: CliResult;
  let tasks: Task[] = [];
  const byId = (id: number) => tasks.find((task) => task.id === id)!;

  beforeAll(async () => {
    root = board();
    run = await runCli(['run', '--auto', '--dir', root, DOWNLOADS_REQUIREMENT], { cwd: root });
    tasks = fs.existsSync(path.join(root, '.tasks')) ? readTasks(root) : [];
  });

  it('exits 0 with an APPROVED summary', () => {
    expect(run.code, describeRun(run)).toBe(0);
    expect(run.stdout).toMatch(/pipeline #1: APPROVED/);
    expect(run.stdout).toMatch(/requirements: \d+ · questions answered: \d+ · files: organize\.py .* · revisions: 1/);
    expect(run.stdout).toMatch(/behaviour per role:\n {2}analyst \(analyst\): \d+ model calls/);
    expect(run.stdout).toMatch(/wall time [\d.]+ s · offline scripted model/);
    expect(run.stderr).toBe('');
  });

  it('leaves five completed stage tasks, each stage owned by its teammate', () => {
    expect(
      tasks.map((task) => ({ id: task.id, stage: task.stage, revision: task.revision, role: task.role, owner: task.owner, status: task.status, pipeline: task.pipeline })),
    ).toEqual([
      { id: 1, stage: 'requirements', revision: 0, role: 'analyst', owner: 'analyst', status: 'completed', pipeline: 1 },
      { id: 2, stage: 'implementation', revision: 0, role: 'engineer', owner: 'engineer', status: 'completed', pipeline: 1 },
      { id: 3, stage: 'review', revision: 0, role: 'reviewer', owner: 'reviewer', status: 'completed', pipeline: 1 },
      { id: 4, stage: 'implementation', revision: 1, role: 'engineer', owner: 'engineer', status: 'completed', pipeline: 1 },
      { id: 5, stage: 'review', revision: 1, role: 'reviewer', owner: 'reviewer', status: 'completed', pipeline: 1 },
    ]);
    for (const task of tasks) expect(task.lease, `#${task.id} still leased`).toBeNull();
    // Each later task says where it came from.
    expect(tasks.slice(1).map((task) => task.artifacts.from)).toEqual([1, 2, 3, 4]);
  });

  it('records the requirements and the Q&A transcript on the analysis task', () => {
    const analysis = byId(1);
    const requirements = analysis.artifacts.requirements as Record<string, string>;
    expect(Object.keys(requirements).length).toBeGreaterThanOrEqual(2);
    for (const [key, value] of Object.entries(requirements)) {
      expect(key).toMatch(/^\w+$/);
      expect(value.length).toBeGreaterThan(0);
    }
    expect(requirements.language).toMatch(/python/i);
    const qa = analysis.artifacts.qa as Array<{ question: string; answer: string; by: string }>;
    expect(qa.length).toBeGreaterThanOrEqual(1);
    for (const entry of qa) {
      expect(entry.question).toMatch(/\?$/);
      expect(entry.answer.length).toBeGreaterThan(0);
      // --auto: the simulated user answered, and the task file says so (not just "lead").
      expect(entry.by).toBe('simulated user');
    }
    // Every answer the analyst got made it into a saved requirement.
    for (const entry of qa) expect(Object.values(requirements)).toContain(entry.answer);
    expect(analysis.result).toBe(analysis.artifacts.summary);
  });

  it('records each written file with the sha256 of what is on disk in workspace/1/', () => {
    const onDisk = path.join(root, 'workspace', '1', 'organize.py');
    expect(fs.existsSync(onDisk)).toBe(true);
    const first = (byId(2).artifacts.files as Array<{ path: string; sha256: string; bytes: number }>)[0]!;
    const revised = (byId(4).artifacts.files as Array<{ path: string; sha256: string; bytes: number }>)[0]!;
    expect(first.path).toBe('organize.py');
    expect(revised).toMatchObject({ path: 'organize.py', sha256: sha256(onDisk), bytes: fs.statSync(onDisk).size });
    // The first draft was a different file; the review of each revision saw the submitted hash.
    expect(first.sha256).not.toBe(revised.sha256);
    expect(byId(2).artifacts.submitted).toMatchObject({ file: 'organize.py', sha256: first.sha256, revision: 0 });
    expect(byId(4).artifacts.submitted).toMatchObject({ file: 'organize.py', sha256: revised.sha256, revision: 1 });
    expect(byId(5).artifacts.submitted).toMatchObject({ sha256: revised.sha256 });
  });

  it('has the real linter find the missing module docstring, then approve the fix', () => {
    const firstReview = byId(3).artifacts;
    expect(firstReview.lint).toMatchObject({ file: 'organize.py', language: 'python', ok: false, problems: [expect.objectContaining({ rule: 'module-docstring' })] });
    expect(firstReview.lint?.problems).toHaveLength(1);
    expect(firstReview.verdict).toBe('changes requested');
    expect(firstReview.issues).toEqual([{ text: expect.stringMatching(/organize\.py line 1: missing module docstring/), severity: 'major' }]);
    expect(firstReview.tests).toMatchObject({ ok: true, exitCode: 0 });
    expect(firstReview.complexity).toMatchObject({ file: 'organize.py' });

    const secondReview = byId(5).artifacts;
    expect(secondReview.lint).toMatchObject({ ok: true, problems: [] });
    expect(secondReview.verdict).toBe('approved');
    expect(byId(5).result).toBe(secondReview.comment);
  });

  it('approves on evidence: a passing check per acceptance criterion, on the submitted version', () => {
    const criteria = byId(1).artifacts.criteria ?? [];
    expect(criteria.map((c) => c.id)).toEqual(['AC1', 'AC2', 'AC3']);
    expect(criteria[0]!.criterion).toMatch(/^Each top-level file is moved into the folder for its type: Images \(\.jpg/);
    expect(criteria[1]!.criterion).toMatch(/numbered name/);
    for (const id of [2, 3, 4, 5]) expect(byId(id).artifacts.criteria).toEqual(criteria);
    for (const id of [3, 5]) {
      const review = byId(id).artifacts;
      expect(review.checks?.map((check) => `${check.id}:${check.ok}`)).toEqual(['CHK1:true', 'CHK2:true', 'CHK3:true']);
      for (const check of review.checks ?? []) expect(check.sha256).toBe(review.submitted?.sha256);
      expect(review.lint?.sha256).toBe(review.submitted?.sha256);
      expect(review.tests?.sha256).toBe(review.submitted?.sha256);
    }
    expect(byId(5).artifacts.criteriaVerdicts).toEqual(
      criteria.map((c, i) => ({ id: c.id, met: true, evidence: expect.stringMatching(new RegExp(`^CHK${i + 1} passed: OK: `)) })),
    );
    expect(run.stdout).toMatch(/acceptance criteria:\n {2}✓ \[AC1\] Each top-level file/);
    expect(run.stdout).toMatch(/checks: 6\/6 passed over 2 reviews · pipeline #1: \d+ model calls · [\d,]+ tokens/);
  });

  it('hands over through the board: requirements to the engineer, the file to the reviewer, the issues to the revision', () => {
    const requirements = byId(1).artifacts.requirements as Record<string, string>;
    expect(byId(1).handoff).toBe('');
    for (const [key, value] of Object.entries(requirements)) {
      expect(byId(2).handoff).toContain(`- ${key}: ${value}`);
      expect(byId(3).handoff).toContain(`- ${key}: ${value}`);
    }
    const draft = byId(3).handoff;
    expect(draft).toContain('Submitted file: organize.py (revision 0');
    // The reviewer sees the draft as submitted: the first line is code, not a docstring.
    expect(draft).toMatch(/```\nimport argparse/);
    const issue = byId(3).artifacts.issues![0]!;
    expect(byId(4).handoff).toContain('This is revision 1');
    expect(byId(4).handoff).toContain(`- [major] ${issue.text}`);
    expect(byId(4).handoff).toMatch(/Acceptance criteria:\n- \[AC1\] .+ \(verify: .+\)\n- \[AC2\]/);
    // The re-review sees what the first review asked for, and the diff that answers it.
    expect(byId(5).artifacts.previousIssues).toEqual([issue]);
    expect(byId(5).handoff).toContain(`The previous review (revision 0) asked for:\n- [major] ${issue.text}`);
    expect(byId(5).handoff).toMatch(/```diff\n--- a\/organize\.py\n\+\+\+ b\/organize\.py\n@@ .+ @@\n\+""".+"""\n import argparse/);
    expect(byId(4).artifacts.issues).toEqual(byId(3).artifacts.issues);
    expect(byId(5).handoff).toContain('Submitted file: organize.py (revision 1');
    expect(byId(5).handoff).toContain(fs.readFileSync(path.join(root, 'workspace', '1', 'organize.py'), 'utf8').trimEnd());
  });

  it('tells the story in each task history', () => {
    const events = (id: number) => byId(id).history.map((entry) => `${entry.by}:${entry.event}`);
    expect(events(1)[0]).toBe('lead:created');
    expect(events(1)).toEqual(expect.arrayContaining(['analyst:claimed', 'analyst:asked', 'analyst:answered', 'analyst:saved', 'analyst:criterion', 'analyst:completed']));
    expect(events(1).indexOf('analyst:asked')).toBeLessThan(events(1).indexOf('analyst:answered'));
    expect(events(1).at(-1)).toBe('analyst:completed');
    const work = ['engineer:claimed', 'engineer:wrote', 'engineer:ran', 'engineer:completed'];
    expect(events(2)).toEqual(['analyst:created', ...work]);
    expect(events(4)).toEqual(['reviewer:created', ...work]);
    const review = ['engineer:created', 'reviewer:claimed', 'reviewer:linted', 'reviewer:tested', 'reviewer:analyzed', 'reviewer:checked', 'reviewer:checked', 'reviewer:checked', 'reviewer:completed'];
    expect(events(3)).toEqual(review);
    expect(events(5)).toEqual(review);
    const saved = byId(1).history.filter((entry) => entry.event === 'saved').length;
    expect(saved).toBe(Object.keys(byId(1).artifacts.requirements ?? {}).length);
  });

  it('writes a workspace file that compiles', () => {
    const file = path.join(root, 'workspace', '1', 'organize.py');
    const compiled = spawnSync('python3', ['-m', 'py_compile', file], { env: { ...process.env, PYTHONPYCACHEPREFIX: path.join(root, '.pycache') } });
    expect(compiled.status, compiled.stderr.toString()).toBe(0);
  });

  it('writes a program that really organizes a scratch folder by type (and --dry-run moves nothing)', () => {
    const file = path.join(root, 'workspace', '1', 'organize.py');
    const scratch = path.join(root, 'scratch');
    fs.mkdirSync(scratch);
    for (const name of ['photo.JPG', 'report.pdf', 'backup.zip', 'song.mp3', 'movie.mkv', 'mystery.xyz']) fs.writeFileSync(path.join(scratch, name), name);
    fs.mkdirSync(path.join(scratch, 'keep-dir'));
    const dry = execFileSync('python3', [file, scratch, '--dry-run'], { encoding: 'utf8' });
    expect(dry).toContain('report.pdf');
    expect(fs.readdirSync(scratch).sort()).toEqual(['backup.zip', 'keep-dir', 'movie.mkv', 'mystery.xyz', 'photo.JPG', 'report.pdf', 'song.mp3']);

    execFileSync('python3', [file, scratch], { encoding: 'utf8' });
    const after = (dir: string) => fs.readdirSync(path.join(scratch, dir)).sort();
    expect(after('Images')).toEqual(['photo.JPG']);
    expect(after('Documents')).toEqual(['report.pdf']);
    expect(after('Archives')).toEqual(['backup.zip']);
    expect(after('Audio')).toEqual(['song.mp3']);
    expect(after('Video')).toEqual(['movie.mkv']);
    expect(after('Other')).toEqual(['mystery.xyz']);
    expect(fs.readdirSync(path.join(scratch, 'keep-dir'))).toEqual([]);
    expect(fs.readFileSync(path.join(scratch, 'Documents', 'report.pdf'), 'utf8')).toBe('report.pdf');
  });

  it('honours the saved name_conflicts requirement: an existing file in the target folder is never overwritten', () => {
    const requirements = byId(1).artifacts.requirements as Record<string, string>;
    expect(requirements.name_conflicts).toMatch(/never overwrite/i);
    const file = path.join(root, 'workspace', '1', 'organize.py');
    const scratch = path.join(root, 'scratch-conflict');
    fs.mkdirSync(path.join(scratch, 'Documents'), { recursive: true });
    fs.writeFileSync(path.join(scratch, 'Documents', 'report.pdf'), 'the old report');
    fs.writeFileSync(path.join(scratch, 'report.pdf'), 'the new report');
    execFileSync('python3', [file, scratch], { encoding: 'utf8' });
    const documents = fs.readdirSync(path.join(scratch, 'Documents')).sort();
    const contents = documents.map((name) => fs.readFileSync(path.join(scratch, 'Documents', name), 'utf8')).sort();
    expect(contents).toEqual(['the new report', 'the old report']);
    expect(documents).toEqual(['report (1).pdf', 'report.pdf']);
  });

  it('keeps a readable trace of model calls, tool calls and transitions', () => {
    const records = fs
      .readFileSync(path.join(root, '.team', 'trace.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const transitions = records.filter((r) => r.kind === 'transition').map((r) => `${r.from}->${r.to ?? r.next}`);
    expect(transitions).toEqual(['1->2', '2->3', '3->4', '4->5', '5->approved']);
    const stages = new Set(records.filter((r) => r.kind === 'model_call').map((r) => `${r.agent}/${r.stage}`));
    expect([...stages].sort()).toEqual(['analyst/requirements', 'engineer/implementation', 'reviewer/review']);
  });

  it('shows the board with `tasks` and one task with `show`', async () => {
    const list = await runCli(['tasks', '--dir', root], { cwd: root });
    expect(list.code, describeRun(list)).toBe(0);
    const lines = list.stdout.trim().split('\n');
    expect(lines).toHaveLength(6);
    expect(lines[5]).toMatch(/^pipeline #1 approved · \d+ model calls · [\d,]+ tokens$/);
    expect(lines[0]).toMatch(/^\[x\] #1: .*\(requirements\) @analyst$/);
    expect(lines[3]).toMatch(/^\[x\] #4: .*\(implementation r1\) @engineer$/);
    expect(lines[4]).toMatch(/^\[x\] #5: .*\(review r1\) @reviewer$/);

    const json = await runCli(['tasks', '--json', '--dir', root], { cwd: root });
    expect((JSON.parse(json.stdout) as Task[]).map((task) => task.id)).toEqual([1, 2, 3, 4, 5]);

    const show = await runCli(['show', '#3', '--dir', root], { cwd: root });
    expect(show.code, describeRun(show)).toBe(0);
    expect(JSON.parse(show.stdout)).toEqual(byId(3));

    const missing = await runCli(['show', '99', '--dir', root], { cwd: root });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/task #99 does not exist/);
    // Digits only, as /show takes them: not whatever a number literal can be.
    for (const id of ['0x3', '3e0', '1.5']) {
      const odd = await runCli(['show', id, '--dir', root], { cwd: root });
      expect({ code: odd.code, stderr: odd.stderr.trim() }).toEqual({ code: 2, stderr: `autoteam: a task id is a positive whole number, got '${id}'` });
    }
    const huge = await runCli(['show', '99999999999999999999', '--dir', root], { cwd: root });
    expect(huge.stderr.trim()).toBe("autoteam: a task id is a positive whole number of at most 9007199254740991, got '99999999999999999999'");
  });
});

// Independent runs: let them overlap.
describe.runIf(python).concurrent('autoteam run: options and failures', () => {
  it('--json --start-stage implementation: skips the analyst and prints the summary as JSON', async () => {
    const root = board();
    const run = await runCli(['run', '--auto', '--json', '--start-stage', 'implementation', '--dir', root, DOWNLOADS_REQUIREMENT], { cwd: root });
    expect(run.code, describeRun(run)).toBe(0);
    const summary = JSON.parse(run.stdout) as Record<string, any>;
    expect(Object.keys(summary).sort()).toEqual(
      ['behaviour', 'checks', 'cost', 'criteria', 'files', 'model', 'pipeline', 'questions', 'requirement', 'requirements', 'retries', 'revisions', 'status', 'tasks', 'tokens', 'usage', 'wallMs', 'workspace'].sort(),
    );
    // The offline model has no price: tokens only.
    expect(summary.cost).toBeNull();
    expect(summary).toMatchObject({ pipeline: 1, status: 'approved', requirement: DOWNLOADS_REQUIREMENT, requirements: 0, questions: 0, files: ['organize.py'], revisions: 1 });
    expect(summary.model).toBe('offline-scripted');
    expect(summary.tasks.map((task: { stage: string; revision: number; owner: string; status: string }) => `${task.stage}/${task.revision}/${task.owner}/${task.status}`)).toEqual([
      'implementation/0/engineer/completed',
      'review/0/reviewer/completed',
      'implementation/1/engineer/completed',
      'review/1/reviewer/completed',
    ]);
    expect(summary.behaviour.map((role: { role: string }) => role.role).sort()).toEqual(['engineer', 'reviewer']);
    for (const role of summary.behaviour) expect(role.modelCalls).toBeGreaterThan(0);
    expect(summary.tokens.input).toBeGreaterThan(0);
    expect(summary.tokens.output).toBeGreaterThan(0);
    expect(summary.wallMs).toBeGreaterThan(0);
    expect(summary.workspace).toBe(path.join(fs.realpathSync(root), 'workspace', '1'));
    // Not a repository: the merge queue says why it holds nothing, rather than that nothing is approved.
    const merge = await runCli(['merge', '--queue', '--dir', root], { cwd: root });
    expect(merge.code, describeRun(merge)).toBe(0);
    expect(merge.stdout.trim()).toBe('the merge queue is empty: approved pipeline #1 worked in a folder (workspace/<n>), not on a branch of a repository, so there is nothing to merge: the files are there to copy');
    // Skipping the analyst, the requirement itself is the criterion, met by the reviewer's checks.
    expect(summary.criteria).toEqual([
      expect.objectContaining({ id: 'AC1', criterion: `The program does what was asked: ${DOWNLOADS_REQUIREMENT}`, met: true, evidence: expect.stringMatching(/^CHK1 passed, CHK2 passed/) }),
    ]);
    expect(summary.usage.calls).toBe(summary.behaviour.reduce((n: number, role: { modelCalls: number }) => n + role.modelCalls, 0));
    const first = readTasks(root)[0]!;
    expect(first).toMatchObject({ stage: 'implementation', role: 'engineer', owner: 'engineer' });
    expect(first.handoff).toContain(`Original requirement: ${DOWNLOADS_REQUIREMENT}`);
  });

  it('--max-revisions 0: exits 1, the pipeline failed, with the reason on the board', async () => {
    const root = board();
    const run = await runCli(['run', '--auto', '--max-revisions', '0', '--dir', root, DOWNLOADS_REQUIREMENT], { cwd: root });
    expect(run.code, describeRun(run)).toBe(1);
    expect(run.stdout).toMatch(/pipeline #1: FAILED — max_revisions \(0\) reached/);
    // Checks ran, but a verdict on a criterion comes with an approval: there is none, and it says so.
    expect(run.stdout).toMatch(/\n {2}· \[AC1\] .* — no verdict: not approved\n/);
    const tasks = readTasks(root);
    expect(tasks.map((task) => `${task.stage}:${task.status}`)).toEqual(['requirements:completed', 'implementation:completed', 'review:failed']);
    expect(tasks[2]!.result).toMatch(/^max_revisions \(0\) reached; the reviewer still found 1 issue$/);
    expect(tasks[2]!.artifacts).toMatchObject({ verdict: 'changes requested', issues: [{ text: expect.stringMatching(/module docstring/), severity: 'major' }] });
    expect(tasks[2]!.history.at(-1)).toMatchObject({ by: 'reviewer', event: 'failed' });
    const trace = fs.readFileSync(path.join(root, '.team', 'trace.jsonl'), 'utf8');
    expect(trace).toMatch(/"kind":"transition","pipeline":1,"from":3,"to":null,"stage":"review","next":"failed","by":"reviewer"/);
  });

  it.each([
    ['a --start-stage that is not a choice', ['--start-stage', 'review', 'x'], /argument 'review' is invalid/],
    ['a missing requirement', [], /missing required argument 'requirement'/],
    ['a non-numeric --max-revisions', ['--max-revisions', 'abc', 'x'], /--max-revisions: 'abc' is not a whole number \(0 or more\)/],
    ['a non-numeric --max-turns, which needs 1 or more', ['--max-turns', 'abc', 'x'], /--max-turns: 'abc' is not a whole number \(1 or more\)/],
    ['--provider offline with a model id', ['--provider', 'offline', '--model', 'foo', 'x'], /--provider offline takes no model id, got --model foo/],
    ['a --max-revisions too large to count', ['--max-revisions', '99999999999999999999', 'x'], /--max-revisions: '99999999999999999999' is too large \(at most 9007199254740991\)/],
    ['a --timeout without a unit', ['--timeout', '600', 'x'], /--timeout: '600' needs a unit \(examples: 90s, 10m, 1h\)/],
    ['a --timeout longer than a timer holds', ['--timeout', '597h', 'x'], /--timeout: '597h' is longer than autoteam can wait \(at most 596h, about 24 days\)/],
    ['a --timeout of no time', ['--timeout', '0s', 'x'], /--timeout: '0s' is no time at all \(examples: 90s, 10m, 1h\)/],
    ['a --timeout of a bare 0, which takes no unit', ['--timeout', '0', 'x'], /--timeout: '0' is no time at all \(examples: 90s, 10m, 1h\)/],
    ['a --timeout that is no duration', ['--timeout', 'soon', 'x'], /--timeout: 'soon' is not a duration \(examples: 90s, 10m, 1h\)/],
    ['a --model that took a requirement as its value', ['--model', 'Write a tool', 'x'], /--model took 'Write a tool' as its value: was its own left out\? \(a model id is one word, like claude-sonnet-4-5\)/],
  ])('exits 2 for a usage error: %s, and starts nothing', async (_label, args, message) => {
    const root = board();
    const run = await runCli(['run', '--auto', '--dir', root, ...args], { cwd: root });
    expect(run.code, describeRun(run)).toBe(2);
    expect(run.stderr).toMatch(message);
    // Usage errors read like every other error, one line starting `autoteam:`.
    expect(run.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^autoteam: /)]);
    expect(fs.existsSync(path.join(root, '.tasks'))).toBe(false);
    expect(fs.existsSync(path.join(root, '.team'))).toBe(false);
  });

  it("a bad value from the board's .env names the file it came from; the same value from the environment does not", async () => {
    const root = board();
    fs.writeFileSync(path.join(root, '.env'), 'MAX_TURNS=zz\n');
    const run = await runCli(['run', '--auto', '--dir', root, 'x'], { cwd: root });
    expect(run.code, describeRun(run)).toBe(2);
    expect(run.stderr.trim()).toBe(`autoteam: MAX_TURNS: 'zz' is not a whole number (1 or more) (set in ${path.join(root, '.env')})`);
    // `--dir=<path>` is the same flag: its .env is read too, from wherever autoteam starts.
    const oneWord = await runCli(['run', '--auto', `--dir=${root}`, 'x'], { cwd: os.tmpdir() });
    expect(oneWord.stderr.trim()).toBe(`autoteam: MAX_TURNS: 'zz' is not a whole number (1 or more) (set in ${path.join(root, '.env')})`);
    // The environment wins over the file, and its value is the person's own to look at.
    const fromEnvironment = await runCli(['run', '--auto', '--dir', root, 'x'], { cwd: root, env: { MAX_TURNS: 'yy' } });
    expect(fromEnvironment.code, describeRun(fromEnvironment)).toBe(2);
    expect(fromEnvironment.stderr.trim()).toBe("autoteam: MAX_TURNS: 'yy' is not a whole number (1 or more)");
    // So does a provider the file names that does not exist, or cannot run without a key.
    fs.writeFileSync(path.join(root, '.env'), 'AUTOTEAM_PROVIDER=bogus\n');
    const provider = await runCli(['run', '--auto', '--dir', root, 'x'], { cwd: root });
    expect(provider.code, describeRun(provider)).toBe(2);
    expect(provider.stderr.trim()).toBe(`autoteam: AUTOTEAM_PROVIDER must be one of anthropic, openai, offline, got 'bogus' (set in ${path.join(root, '.env')})`);
  });

  it('a broken .team/config.json: one line naming it and how to recover, exit 2, and no lead left holding the board', async () => {
    const root = board();
    fs.mkdirSync(path.join(root, '.team'), { recursive: true });
    fs.writeFileSync(path.join(root, '.team', 'config.json'), '{broken');
    for (const args of [['run', '--auto', '--dir', root, 'x'], ['--dir', root]]) {
      const run = await runCli(args, { cwd: root, input: '' });
      expect(run.code, describeRun(run)).toBe(2);
      const errors = run.stderr.trim().split('\n');
      expect(errors).toHaveLength(1);
      expect(errors[0]).toMatch(/^autoteam: .*\.team\/config\.json: not valid JSON \(.*\); fix it, or delete it and a new one is written/);
      expect(run.stdout).not.toMatch(/error/);
      expect(fs.existsSync(path.join(root, '.team', 'lead.json'))).toBe(false);
    }
    expect(fs.readFileSync(path.join(root, '.team', 'config.json'), 'utf8')).toBe('{broken');
  });

  it('exits 2 for a blank requirement, promptly, without leaving teammate threads running', async () => {
    const root = board();
    const run = await runCli(['run', '--auto', '--dir', root, '   '], { cwd: root });
    expect(run.signal, `the CLI hung and was killed\n${describeRun(run)}`).toBeNull();
    expect(run.code, describeRun(run)).toBe(2);
    expect(run.stderr).toMatch(/requirement cannot be empty/);
  });

  it('`autoteam stages` prints every stage, role, tool and transition without calling a model', async () => {
    const server = await MessagesServer.start([]);
    try {
      const root = board();
      const env = { ANTHROPIC_API_KEY: 'test-key-stages', ANTHROPIC_BASE_URL: server.url };
      const text = await runCli(['stages'], { cwd: root, env });
      expect(text.code, describeRun(text)).toBe(0);
      for (const stage of Object.values(STAGE_DEFINITIONS)) {
        expect(text.stdout).toContain(`== ${stage.stage} (${stage.title}) — role: ${stage.role}`);
        expect(text.stdout).toContain(`   tools: ${[...stage.tools, ...COORDINATION_TOOL_NAMES].join(', ')}`);
        for (const [signal, transition] of Object.entries(stage.transitions)) expect(text.stdout).toMatch(new RegExp(`   ${signal} → ${transition.next}\\b`));
        expect(text.stdout).toContain(stage.systemPrompt.split('\n')[0]!);
      }
      expect(text.stdout).toContain('request_revision → implementation (revision n+1, up to max_revisions; fails when not converging)');

      const json = await runCli(['stages', '--json'], { cwd: root, env });
      const stages = JSON.parse(json.stdout) as Array<{ stage: string; role: string; tools: string[]; offeredTools: string[]; transitions: Record<string, unknown>; systemPrompt: string }>;
      expect(stages.map((stage) => [stage.stage, stage.role])).toEqual([
        ['requirements', 'analyst'],
        ['implementation', 'engineer'],
        ['review', 'reviewer'],
      ]);
      for (const stage of stages) {
        const definition = STAGE_DEFINITIONS[stage.stage as keyof typeof STAGE_DEFINITIONS];
        expect(stage.offeredTools).toEqual([...definition.tools, ...COORDINATION_TOOL_NAMES]);
        expect(stage.transitions).toEqual(definition.transitions);
        expect(stage.systemPrompt).toBe(definition.systemPrompt);
      }
      expect(server.requests).toHaveLength(0);
      expect(fs.readdirSync(root)).toEqual([]);
    } finally {
      await server.close();
    }
  });
});

// The offline model is honest: it builds only what it really can, and what it builds honours the answers.
// Which requirements and answers are outside its repertoire is decided without running anything; every
// case of it is checked in tests/stages/offline-repertoire.test.ts. Here, one of each way a run ends so.
describe.runIf(python).concurrent('autoteam run, offline: honest about its repertoire', () => {
  it.each([
    // Another kind of program, a near miss of the organizer, another language.
    'Organize my music playlist.',
    'Write a Python script that organizes my Downloads folder by file type, including all subfolders recursively.',
    'Write a Go program that counts the words in a text file.',
  ])('fails with one line, approving nothing, for a requirement outside its repertoire: %s', async (requirement) => {
    const root = board();
    const run = await runCli(['run', '--auto', '--dir', root, requirement], { cwd: root });
    expect(run.code, describeRun(run)).toBe(1);
    expect(run.stdout).toContain('pipeline #1: FAILED — the offline model cannot implement this requirement — set ANTHROPIC_API_KEY, or OPENAI_API_KEY / OPENAI_BASE_URL, to run it on a model');
    // No review ran: no checks to count.
    expect(run.stdout).toMatch(/\nchecks: none run · pipeline #1: /);
    const tasks = readTasks(root);
    expect(tasks.some((task) => task.artifacts.verdict === 'approved')).toBe(false);
    // No stub was written or submitted.
    expect(tasks.some((task) => task.artifacts.submitted)).toBe(false);
    expect(fs.readdirSync(path.join(root, 'workspace', '1'))).toEqual([]);
  });

  it('honours answers that change the program: the approved organizer uses the folders and the conflict rule it was told', async () => {
    const root = board();
    const run = await runCli(['run', '--dir', root, DOWNLOADS_REQUIREMENT], { cwd: root, input: 'Pictures and Misc only\nskip and warn\n' });
    expect(run.code, describeRun(run)).toBe(0);
    expect(run.stdout).toContain('! person answers analyst: Pictures and Misc only');
    // The task file says a person answered (the lead only carried it).
    expect((readTasks(root)[0]!.artifacts.qa ?? []).map((entry) => entry.by)).toEqual(['person', 'person']);
    const criteria = readTasks(root)[0]!.artifacts.criteria ?? [];
    expect(criteria[0]!.criterion).toMatch(/: Pictures \(\.jpg.*\); Misc \(anything else\)$/);
    expect(criteria[1]!.criterion).toBe('A file whose name already exists in the target folder is left where it is, with a warning naming it');

    // Run the approved program on a scratch folder of our own.
    const scratch = fs.mkdtempSync(path.join(root, 'scratch-'));
    for (const name of ['a.jpg', 'b.pdf', 'c.txt', 'd.png']) fs.writeFileSync(path.join(scratch, name), 'new');
    fs.mkdirSync(path.join(scratch, 'Pictures'));
    fs.writeFileSync(path.join(scratch, 'Pictures', 'a.jpg'), 'old');
    const organized = spawnSync('python3', [path.join(root, 'workspace', '1', 'organize.py'), scratch], { encoding: 'utf8' });
    expect(organized.status, organized.stderr).toBe(0);
    expect(walkRelative(scratch)).toEqual(['Misc/b.pdf', 'Misc/c.txt', 'Pictures/a.jpg', 'Pictures/d.png', 'a.jpg']);
    expect(fs.readFileSync(path.join(scratch, 'Pictures', 'a.jpg'), 'utf8')).toBe('old');
    expect(organized.stderr).toMatch(/skipped a\.jpg/);
  });

  it('--json: a line of standard input no question came for is a note on stderr, beside the JSON', async () => {
    const root = board();
    const run = await runCli(['run', '--json', '--dir', root, 'Organize my music playlist.'], { cwd: root, input: 'only words please\n' });
    expect(run.code, describeRun(run)).toBe(1);
    expect((JSON.parse(run.stdout) as { status: string }).status).toBe('failed');
    expect(run.stderr).toContain("note: a line of standard input was left unused, no question came for it (the first: 'only words please')");
  });

  it('fails honestly when an answer asks for what it cannot build, and says why', async () => {
    const root = board();
    const run = await runCli(['run', '--dir', root, DOWNLOADS_REQUIREMENT], { cwd: root, input: 'Receipts and Stuff\nrename the new one\n' });
    expect(run.code, describeRun(run)).toBe(1);
    expect(run.stdout).toContain(
      "pipeline #1: FAILED — the offline model cannot implement this requirement — set ANTHROPIC_API_KEY, or OPENAI_API_KEY / OPENAI_BASE_URL, to run it on a model (it cannot tell which files go into 'Receipts', 'Stuff'",
    );
    expect(readTasks(root).some((task) => task.artifacts.verdict === 'approved')).toBe(false);
  });

  it('reads folders given as "Name: extensions" and checks every extension it was told', async () => {
    const root = board();
    const run = await runCli(['run', '--dir', root, DOWNLOADS_REQUIREMENT], { cwd: root, input: 'Photos: jpg, png; Docs: pdf; everything else into Misc\noverwrite\n' });
    expect(run.code, describeRun(run)).toBe(0);
    const review = readTasks(root).at(-1)!;
    expect(review.artifacts.criteria?.[0]?.criterion).toMatch(/: Photos \(\.jpg, \.png\); Docs \(\.pdf\); Misc \(anything else\)$/);
    expect(review.artifacts.checks?.[0]?.output).toMatch(/sample1\.jpg -> Photos\/, sample1\.png -> Photos\/, sample2\.pdf -> Docs\//);
  });

  it('stops at once when a question is asked and standard input has ended, leaving the pipeline open and saying so', async () => {
    const root = board();
    const run = await runCli(['run', '--dir', root, DOWNLOADS_REQUIREMENT], { cwd: root, input: '' });
    expect(run.signal).toBeNull();
    expect(run.code, describeRun(run)).toBe(1);
    expect(run.stdout).toContain("pipeline #1: LEFT OPEN — standard input ended with analyst's question for pipeline #1 unanswered");
    expect(run.stdout).toContain('pipeline #1 is left open on the board (a lead here goes on with it, autoteam cancel 1 drops it)');
    expect(readTasks(root).map((task) => task.status)).toEqual(['pending']);
  });

  it('names the unanswered question, and its pipeline, in the summary of every pipeline the stop leaves open', async () => {
    const root = board();
    const run = await runCli(['run', '--dir', root, 'Write a word counter', DOWNLOADS_REQUIREMENT], { cwd: root, input: '' });
    expect(run.code, describeRun(run)).toBe(1);
    const left = [...run.stdout.matchAll(/^pipeline #(\d): LEFT OPEN — standard input ended with analyst's question for pipeline #(\d) unanswered/gm)];
    expect(left.map((match) => match[1]).sort(), describeRun(run)).toEqual(['1', '2']);
    // One question stopped the run: the pipeline that did not ask is told whose it was.
    expect(new Set(left.map((match) => match[2])).size).toBe(1);
  });

  it('with two analysts, each pipeline left with a question of its own is told its own, not the first one', async () => {
    const root = board();
    const run = CliChild.start(['run', '--analysts', '2', '--dir', root, 'Write a word counter', DOWNLOADS_REQUIREMENT], { cwd: root, stdin: 'pipe' });
    try {
      // Both analysts ask before standard input ends: both questions are pending when the run stops.
      await run.waitFor(() => (run.lines.filter((line) => /\? analyst(-2)? asks \(pipeline #[12]\)/.test(line)).length >= 2 ? true : undefined), 'both analysts to ask');
      run.child.stdin!.end();
      expect(await run.exited).toEqual({ code: 1, signal: null });
    } finally {
      await run.stop();
    }
    const stdout = run.lines.join('\n');
    const named = [...stdout.matchAll(/^pipeline #(\d): LEFT OPEN — standard input ended with analyst(?:-2)?'s question for pipeline #(\d) unanswered/gm)].map((match) => [match[1], match[2]]);
    expect(named, stdout).toEqual([
      ['1', '1'],
      ['2', '2'],
    ]);
  });

  it('piped into something that stops reading (| head): stops as on Ctrl+C, no stack trace, the board released', async () => {
    const root = board();
    const child = spawn(process.execPath, [cliEntry, 'run', '--auto', '--dir', root, DOWNLOADS_REQUIREMENT], { cwd: root, env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    // Read up to the posted pipeline, then close the pipe, as `head -2` does.
    let stdout = '';
    await new Promise<void>((resolve) => {
      child.stdout!.setEncoding('utf8').on('data', (text: string) => {
        stdout += text;
        if (/posted pipeline #1/.test(stdout)) resolve();
      });
    });
    child.stdout!.destroy();
    expect(await exited, stderr).toBe(130);
    expect(stderr).not.toMatch(/EPIPE|at /);
    // What it left open is said where it can still be read.
    expect(stderr.trim()).toBe('autoteam: interrupted (its output was closed); unfinished tasks were handed back to the board; pipeline #1 is left open on the board (a lead here goes on with it, autoteam cancel 1 drops it)');
    expect(fs.existsSync(path.join(root, '.team', 'lead.json'))).toBe(false);
    expect(readTasks(root).filter((task) => task.status === 'in_progress')).toEqual([]);
  });

  it('on --timeout cancels the pipeline, so the board agrees the run failed', async () => {
    const root = board();
    const run = await runCli(['run', '--auto', '--timeout', '200ms', '--dir', root, DOWNLOADS_REQUIREMENT], { cwd: root });
    expect(run.code, describeRun(run)).toBe(1);
    expect(run.stdout).toContain('pipeline #1: CANCELLED — timed out after 200 ms; pipeline #1 cancelled (autoteam retry 1 starts it again from the stage it stopped at)');
    const tasks = readTasks(root);
    expect(tasks.length).toBeGreaterThan(0);
    expect(tasks.filter((task) => task.status === 'pending' || task.status === 'in_progress')).toEqual([]);
    expect(tasks.at(-1)!.status).toBe('cancelled');
    const list = await runCli(['tasks', '--dir', root], { cwd: root });
    expect(list.stdout).toMatch(/pipeline #1 cancelled .*— cancelled by lead: autoteam run timed out after 200 ms/);
    // Outside a repository there is no branch to show, and it says why.
    const diff = await runCli(['diff', '1', '--dir', root], { cwd: root });
    expect(diff.code).toBe(2);
    expect(diff.stderr.trim()).toBe("autoteam: pipeline #1 has no branch: it works in workspace/1 (the board was not in a git repository, or in one with no commit yet, when it was posted; --no-worktree was given; or it is autoteam's own checkout)");
  });
});

function walkRelative(dir: string): string[] {
  const out: string[] = [];
  const visit = (current: string) => {
    for (const entry of fs.readdirSync(current, { withFileTypes: true })) {
      const full = path.join(current, entry.name);
      if (entry.isDirectory()) visit(full);
      else out.push(path.relative(dir, full).split(path.sep).join('/'));
    }
  };
  visit(dir);
  return out.sort();
}

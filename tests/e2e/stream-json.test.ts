/**
 * `autoteam run --output-format stream-json` end to end: the real built CLI, worker threads and the
 * offline scripted team take the Downloads requirement to approval while stdout carries one JSON
 * object a line — an init record, the board's events in the log's order, then the result with the
 * summary's fields. `--json` still prints the summary alone, and asking for both is refused.
 * Build first: `npm run build`.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Task } from '../../src/core/board/schemas.js';
import { type TeamEvent, TeamEventSchema } from '../../src/core/events/schema.js';
import { type CliResult, cleanEnv, cliEntry, DOWNLOADS_REQUIREMENT, describeRun, readTasks, runCli, tempBoard } from '../helpers/pipeline-cli.js';

const roots: string[] = [];
function board(): string {
  const root = tempBoard('autoteam-stream-');
  roots.push(root);
  return root;
}
afterAll(() => {
  for (const root of roots) fs.rmSync(root, { recursive: true, force: true });
});

const python = spawnSync('python3', ['--version']).status === 0;

type Line = Record<string, unknown> & { type: string };

/** Every stdout line, parsed (a line that is not a JSON object with a `type` fails the test here). */
function records(stdout: string): Line[] {
  const lines = stdout.split('\n').filter((line) => line.length > 0);
  return lines.map((line, i) => {
    let value: unknown;
    expect(() => (value = JSON.parse(line)), `line ${i + 1} is not JSON: ${line.slice(0, 200)}`).not.toThrow();
    expect(value, `line ${i + 1}`).toEqual(expect.objectContaining({ type: expect.any(String) }));
    return value as Line;
  });
}

function logOf(root: string): TeamEvent[] {
  return fs
    .readFileSync(path.join(root, '.team', 'events.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => TeamEventSchema.parse(JSON.parse(line)));
}

describe.runIf(python)('autoteam run --auto --output-format stream-json, offline', () => {
  let root = '';
  let run: CliResult;
  let lines: Line[] = [];
  let events: TeamEvent[] = [];
  let tasks: Task[] = [];
  const ofType = <T extends TeamEvent['type']>(type: T) => events.filter((event): event is Extract<TeamEvent, { type: T }> => event.type === type);

  beforeAll(async () => {
    root = board();
    run = await runCli(['run', '--auto', '--output-format', 'stream-json', '--dir', root, DOWNLOADS_REQUIREMENT], { cwd: root, killAfterMs: 240_000 });
    lines = run.code === 0 ? records(run.stdout) : [];
    events = lines.slice(1, -1).map((line) => TeamEventSchema.parse(line));
    tasks = readTasks(root);
  }, 300_000);

  it('exits 0 with only JSON lines on stdout and nothing on stderr', () => {
    expect(run.code, describeRun(run)).toBe(0);
    expect(run.stderr).toBe('');
    // No text-mode lines slipped in: the first and last records are the stream's own.
    expect(lines.length).toBeGreaterThan(20);
    expect(run.stdout.endsWith('\n')).toBe(true);
  });

  it('starts with the init record: the pipeline, its first task, the model and the board', () => {
    expect(lines[0]).toEqual({ type: 'system', subtype: 'init', pipeline: 1, task: 1, model: 'offline-scripted', board: root });
  });

  it('streams every event of the board log, each valid, in the order of its strictly increasing seq', () => {
    // Everything between init and result is a team event; nothing else (no error records) came.
    for (const line of lines.slice(1, -1)) expect(TeamEventSchema.safeParse(line).success, JSON.stringify(line).slice(0, 300)).toBe(true);
    const seqs = events.map((event) => event.seq!);
    for (let i = 1; i < seqs.length; i++) expect(seqs[i], `seq after ${seqs[i - 1]}`).toBeGreaterThan(seqs[i - 1]!);
    // The stream is the board's log as written: no event lost, none invented.
    expect(events).toEqual(logOf(root));
    expect(seqs[0]).toBe(1);
    for (const event of events) expect(event.team).toBe(path.basename(root));
  });

  it('tells the pipeline’s story: posted, claimed with tokens, model and tool calls, questions, criteria, checks, verdicts, approval', () => {
    expect(ofType('task_posted').map((event) => [event.task, event.stage, event.revision])).toEqual(
      tasks.map((task) => [task.id, task.stage, task.revision]),
    );
    const claims = ofType('task_claimed');
    expect(claims.map((event) => [event.task, event.agent, event.token, event.takeover])).toEqual(tasks.map((task) => [task.id, task.owner, task.claims, false]));
    for (const claim of claims) expect(claim.token).toBeGreaterThanOrEqual(1);

    const calls = ofType('model_call');
    expect(calls.length).toBeGreaterThanOrEqual(tasks.length);
    for (const call of calls) {
      expect(call).toMatchObject({ provider: 'offline', model: 'offline-scripted', purpose: 'turn', pipeline: 1 });
      expect(call.inputTokens).toBeGreaterThan(0);
      expect(call.outputTokens).toBeGreaterThan(0);
      expect(call.agent).toBe(tasks.find((task) => task.id === call.task)!.owner);
    }
    const tools = ofType('tool_call');
    const ok = tools.filter((call) => call.outcome === 'ok');
    expect(ok.length / tools.length).toBeGreaterThanOrEqual(0.8);
    for (const name of ['ask_clarifying_question', 'write_file', 'bash', 'submit_for_review', 'run_check', 'approve_code']) {
      expect(tools.map((call) => call.tool), name).toContain(name);
    }

    const asked = ofType('question_asked');
    const answered = ofType('question_answered');
    expect(asked.length).toBeGreaterThanOrEqual(1);
    expect(answered.map((event) => event.questionId).sort()).toEqual(asked.map((event) => event.questionId).sort());
    for (const answer of answered) expect(answer).toMatchObject({ by: 'simulated user', task: 1 });

    expect(ofType('criterion_added').map((event) => event.id)).toEqual(['AC1', 'AC2', 'AC3']);
    const checks = ofType('check_ran');
    expect(checks.length).toBeGreaterThanOrEqual(3);
    expect(checks.every((check) => check.language === 'python')).toBe(true);
    expect(ofType('review_verdict').map((event) => event.verdict).at(-1)).toBe('approved');
    expect(ofType('pipeline_status').map((event) => event.status)).toEqual(['active', 'approved']);

    // Cause before effect in the log's order: a task is posted before it is claimed, claimed before completed.
    const at = (match: (event: TeamEvent) => boolean) => events.findIndex(match);
    for (const task of tasks) {
      const posted = at((e) => e.type === 'task_posted' && e.task === task.id);
      const claimed = at((e) => e.type === 'task_claimed' && e.task === task.id);
      const completed = at((e) => e.type === 'task_completed' && e.task === task.id);
      expect(posted).toBeLessThan(claimed);
      expect(claimed).toBeLessThan(completed);
    }
    // A question after its task's claim, its answer after the question (the sender's events are in
    // the log before its message can be acted on).
    for (const question of asked) {
      const claimed = at((e) => e.type === 'task_claimed' && e.task === question.task);
      const askedAt = at((e) => e.type === 'question_asked' && e.questionId === question.questionId);
      const answeredAt = at((e) => e.type === 'question_answered' && e.questionId === question.questionId);
      expect(claimed).toBeLessThan(askedAt);
      expect(askedAt).toBeLessThan(answeredAt);
      expect(answered.find((answer) => answer.questionId === question.questionId)).toMatchObject({ asker: 'analyst' });
    }
    expect(at((e) => e.type === 'pipeline_status' && e.status === 'approved')).toBeGreaterThan(at((e) => e.type === 'review_verdict' && e.verdict === 'approved'));
  });

  it('ends with the result: success, and the summary’s fields agreeing with the board and the events', () => {
    const result = lines.at(-1)!;
    expect(result).toMatchObject({ type: 'result', subtype: 'success', is_error: false, pipeline: 1, status: 'approved', requirement: DOWNLOADS_REQUIREMENT, files: ['organize.py'] });
    expect(result.tasks).toEqual(tasks.map((task) => ({ id: task.id, stage: task.stage, revision: task.revision, owner: task.owner, status: task.status, result: task.result })));
    expect(result.workspace).toBe(path.join(root, 'workspace', '1'));
    const calls = ofType('model_call');
    expect(result.usage).toEqual({ calls: calls.length, inputTokens: calls.reduce((n, c) => n + c.inputTokens, 0), outputTokens: calls.reduce((n, c) => n + c.outputTokens, 0) });
    expect(result.checks).toEqual({ run: ofType('check_ran').length, passed: ofType('check_ran').filter((check) => check.ok).length });
    expect(result.questions).toBe(ofType('question_answered').length);
    expect((result.criteria as Array<{ id: string; met: boolean }>).map((c) => [c.id, c.met])).toEqual([
      ['AC1', true],
      ['AC2', true],
      ['AC3', true],
    ]);
    expect(result.cost).toBeNull();
    expect(result.wallMs).toEqual(expect.any(Number));
  });
});

describe('autoteam run --output-format stream-json when posting takes a while', () => {
  /**
   * The init record is written after `session.post` returns, while the board's events stream as
   * soon as the log has them: events that come first (a TaskCreated hook that takes a moment lets
   * task_posted, pipeline_status and hook_decision out before the post returns) wait behind init.
   * This hook waits until the board's log has task_posted (20 s at most), then blocks the task: the
   * task is held while it decides, so no teammate works it meanwhile.
   */
  it('still writes the init record first', async () => {
    const root = board();
    const out = path.join(root, 'stdout.jsonl');
    const wait = `i=0; while [ $i -lt 200 ] && ! grep -q '"type":"task_posted"' .team/events.jsonl 2>/dev/null; do sleep 0.1; i=$((i+1)); done; echo 'requirements are frozen' >&2; exit 2`;
    fs.writeFileSync(path.join(root, 'hold.sh'), `${wait}\n`);
    fs.writeFileSync(path.join(root, 'autoteam.config.json'), JSON.stringify({ hooks: { TaskCreated: [{ matcher: 'requirements', hooks: [{ type: 'command', command: 'sh hold.sh' }] }] } }));
    const fd = fs.openSync(out, 'w');
    const child = spawn(process.execPath, [cliEntry, 'run', '--auto', '--output-format', 'stream-json', '--dir', root, DOWNLOADS_REQUIREMENT], { cwd: root, env: cleanEnv(), stdio: ['ignore', fd, 'pipe'] });
    fs.closeSync(fd);
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    const killer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    clearTimeout(killer);
    const lines = records(fs.readFileSync(out, 'utf8'));
    // The run itself ends as it should: the hook cancelled the first task, so the pipeline.
    expect(code, stderr).toBe(1);
    expect(lines.at(-1)).toMatchObject({ type: 'result', subtype: 'error', status: 'cancelled' });
    expect(lines[0]).toMatchObject({ type: 'system', subtype: 'init' });
    // The hook saw task_posted before the post returned, and the stream still put init first.
    expect(lines.findIndex((line) => line.type === 'task_posted')).toBeGreaterThan(0);
    expect(lines.some((line) => line.type === 'task_claimed')).toBe(false);
  }, 150_000);
});

describe('autoteam run output formats', () => {
  it('--json prints the summary alone, as one JSON document with the fields of the stream’s result', async () => {
    const root = board();
    // A run that gives up at once still ends with its summary, without the cost of a whole pipeline.
    const run = await runCli(['run', '--auto', '--json', '--timeout', '1ms', '--dir', root, DOWNLOADS_REQUIREMENT], { cwd: root, killAfterMs: 120_000 });
    expect(run.code, describeRun(run)).toBe(1);
    const summary = JSON.parse(run.stdout) as Record<string, unknown>;
    expect(summary).toMatchObject({ pipeline: 1, status: 'cancelled', requirement: DOWNLOADS_REQUIREMENT, reason: expect.stringMatching(/^timed out after/) });
    expect(summary).not.toHaveProperty('type');
    expect(Object.keys(summary)).toEqual(expect.arrayContaining(['tasks', 'files', 'workspace', 'criteria', 'checks', 'usage', 'behaviour', 'tokens', 'cost', 'wallMs']));
    // Pretty-printed, one document: no event line before or after it.
    expect(run.stdout.trimStart().startsWith('{\n')).toBe(true);
  }, 150_000);

  it('--json with --output-format stream-json is refused with one line and exit 2, before anything starts', async () => {
    const root = board();
    const run = await runCli(['run', '--auto', '--json', '--output-format', 'stream-json', '--dir', root, DOWNLOADS_REQUIREMENT], { cwd: root });
    expect(run.code, describeRun(run)).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr.trim().split('\n')).toEqual(['autoteam: --json and --output-format stream-json contradict each other: give one']);
    expect(fs.existsSync(path.join(root, '.tasks'))).toBe(false);
  });

  it.runIf(python)('a trace collector out of reach is said once: a record of the stream, or under --json a line on stderr', async () => {
    // A port nothing listens on: taken, then let go.
    const closed = await new Promise<number>((resolve) => {
      const server = net.createServer().listen(0, '127.0.0.1', () => {
        const { port } = server.address() as net.AddressInfo;
        server.close(() => resolve(port));
      });
    });
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${closed}` };
    const told = new RegExp(`^traces could not be sent to http://127\\.0\\.0\\.1:${closed}: .*ECONNREFUSED.* \\(said once; the team works on without traces\\)$`);
    const streamed = await runCli(['run', '--auto', '--output-format', 'stream-json', '--dir', board(), DOWNLOADS_REQUIREMENT], { cwd: os.tmpdir(), env, killAfterMs: 240_000 });
    expect(streamed.code, describeRun(streamed)).toBe(0);
    const errors = records(streamed.stdout).filter((line) => line.type === 'error');
    expect(errors, describeRun(streamed)).toEqual([{ type: 'error', code: 'TELEMETRY', message: expect.stringMatching(told) }]);
    const json = await runCli(['run', '--auto', '--json', '--dir', board(), DOWNLOADS_REQUIREMENT], { cwd: os.tmpdir(), env, killAfterMs: 240_000 });
    expect(json.code, describeRun(json)).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ status: 'approved' });
    const lines = json.stderr.split('\n').filter((line) => line.startsWith('autoteam: TELEMETRY: '));
    expect(lines, describeRun(json)).toHaveLength(1);
    expect(lines[0]!.slice('autoteam: TELEMETRY: '.length)).toMatch(told);
  }, 300_000);

  it('an unknown --output-format is refused with exit 2', async () => {
    const root = board();
    const run = await runCli(['run', '--auto', '--output-format', 'yaml', '--dir', root, DOWNLOADS_REQUIREMENT], { cwd: root });
    expect(run.code, describeRun(run)).toBe(2);
    expect(run.stderr).toMatch(/yaml/);
    expect(fs.existsSync(path.join(root, '.tasks'))).toBe(false);
  });
});

/**
 * The person's hooks (`hooks` in autoteam.config.json) through the real runtime: `autoteam run`
 * with its worker threads and the offline team, hook scripts that record the JSON they read on stdin.
 *
 * One run that is approved despite its hooks: a PreToolUse hook on `bash` blocks every engineer
 * shell call (a tool error the model reads, outcome `hook_blocked`); a TaskCompleted hook on the
 * requirements stage blocks the first completion (a state file remembers) and allows the second, the
 * task staying in progress with the analyst between them; a PostToolUse hook that exits 1 and a
 * PreToolUse hook that sleeps past its timeout only warn; a PipelineCompleted hook reads the status.
 * One run whose TaskCreated hook blocks its first task: the task is cancelled with the hook's reason,
 * so the pipeline, and PipelineCompleted says so. Build first: `npm run build`.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Task } from '../../src/core/board/schemas.js';
import { type TeamEvent, TeamEventSchema } from '../../src/core/events/schema.js';
import type { HooksConfig } from '../../src/core/hooks/config.js';
import { until } from '../helpers/agent-wait.js';
import { type CliResult, DOWNLOADS_REQUIREMENT, describeRun, readTasks, runCli, tempBoard } from '../helpers/pipeline-cli.js';

const roots: string[] = [];
afterAll(() => {
  for (const root of roots) fs.rmSync(root, { recursive: true, force: true });
});

const python = spawnSync('python3', ['--version']).status === 0;

/** hook.sh NAME EXIT [MESSAGE]: appends its stdin as a line of hooks/NAME.jsonl, says MESSAGE on stderr, exits EXIT. */
const HOOK = `input=$(cat)
printf '%s\\n' "$input" >> "hooks/$1.jsonl"
if [ -n "$3" ]; then printf '%s\\n' "$3" >&2; fi
exit "$2"
`;
/** once.sh NAME: blocks the first time (a state file remembers), then allows, keeping the task file as it was then. */
const ONCE = `input=$(cat)
printf '%s\\n' "$input" >> "hooks/$1.jsonl"
if [ ! -e "hooks/$1.blocked" ]; then
  : > "hooks/$1.blocked"
  echo 'the analysis needs a second look' >&2
  exit 2
fi
id=$(printf '%s' "$input" | sed 's/.*"task_id":\\([0-9]*\\).*/\\1/')
cp ".tasks/task_$id.json" "hooks/$1.task.json"
exit 0
`;
/** slow.sh NAME: records its stdin, then outlasts any timeout a test gives it. */
const SLOW = `input=$(cat)
printf '%s\\n' "$input" >> "hooks/$1.jsonl"
sleep 300
`;

const command = (text: string, extra: { matcher?: string; timeout?: number } = {}) => ({
  ...(extra.matcher ? { matcher: extra.matcher } : {}),
  hooks: [{ type: 'command' as const, command: text, ...(extra.timeout ? { timeout: extra.timeout } : {}) }],
});

function boardWithHooks(hooks: HooksConfig): string {
  const root = tempBoard('autoteam-hooks-run-');
  roots.push(root);
  fs.mkdirSync(path.join(root, 'hooks'));
  for (const [name, text] of Object.entries({ 'hook.sh': HOOK, 'once.sh': ONCE, 'slow.sh': SLOW })) fs.writeFileSync(path.join(root, 'hooks', name), text);
  fs.writeFileSync(path.join(root, 'autoteam.config.json'), JSON.stringify({ hooks }, null, 2));
  return root;
}

/** What a hook read on stdin, one JSON object per call. */
function stdinOf(root: string, name: string): Array<Record<string, any>> {
  const file = path.join(root, 'hooks', `${name}.jsonl`);
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, any>);
}

function logOf(root: string): TeamEvent[] {
  return fs
    .readFileSync(path.join(root, '.team', 'events.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => TeamEventSchema.parse(JSON.parse(line)));
}

type Decision = Extract<TeamEvent, { type: 'hook_decision' }>;
type ToolCall = Extract<TeamEvent, { type: 'tool_call' }>;
const decisions = (events: TeamEvent[], hook: Decision['hook']) => events.filter((e): e is Decision => e.type === 'hook_decision' && e.hook === hook);
const toolCalls = (events: TeamEvent[], tool: string) => events.filter((e): e is ToolCall => e.type === 'tool_call' && e.tool === tool);

describe.runIf(python)('hooks in a run that is approved despite them', () => {
  const BASH = 'sh hooks/hook.sh pre-bash 2 "no shell in this project"';
  const LINT = 'sh hooks/slow.sh pre-lint';
  const WRITE = 'sh hooks/hook.sh post-write 1 "style check unavailable"';
  const DONE = 'sh hooks/once.sh completed';
  const IMPLEMENTED = 'sh hooks/once.sh implemented';
  const END = 'sh hooks/hook.sh pipeline 0';
  let root = '';
  let run: CliResult;
  let events: TeamEvent[] = [];
  let tasks: Task[] = [];
  const stage = (name: string) => tasks.filter((task) => task.stage === name);

  beforeAll(async () => {
    root = boardWithHooks({
      PreToolUse: [command(BASH, { matcher: 'bash' }), command(LINT, { matcher: 'run_linter', timeout: 1 })],
      PostToolUse: [command(WRITE, { matcher: 'write_file' })],
      TaskCompleted: [command(DONE, { matcher: 'requirements' }), command(IMPLEMENTED, { matcher: 'implementation' })],
      PipelineCompleted: [command(END)],
    });
    run = await runCli(['run', '--auto', '--dir', root, DOWNLOADS_REQUIREMENT], { cwd: root, killAfterMs: 240_000 });
    events = fs.existsSync(path.join(root, '.team', 'events.jsonl')) ? logOf(root) : [];
    tasks = fs.existsSync(path.join(root, '.tasks')) ? readTasks(root) : [];
  }, 300_000);

  it('ends approved: warnings and blocks cost turns, not the pipeline', () => {
    expect(run.code, describeRun(run)).toBe(0);
    expect(run.stdout).toMatch(/pipeline #1: APPROVED/);
    expect(tasks.every((task) => task.status === 'completed')).toBe(true);
    expect(tasks.at(-1)!.artifacts.verdict).toBe('approved');
  });

  it('PreToolUse exit 2 on bash: every engineer shell call is refused as hook_blocked, with the hook’s reason; nothing ran', () => {
    const calls = toolCalls(events, 'bash');
    expect(calls.length).toBeGreaterThanOrEqual(1);
    for (const call of calls) {
      expect(call).toMatchObject({ agent: 'engineer', role: 'engineer', outcome: 'hook_blocked', summary: 'blocked by a hook: no shell in this project' });
    }
    const blocks = decisions(events, 'PreToolUse').filter((d) => d.command === BASH);
    expect(blocks).toHaveLength(calls.length);
    for (const [i, block] of blocks.entries()) {
      expect(block).toMatchObject({ decision: 'block', exitCode: 2, reason: 'no shell in this project', agent: 'engineer', role: 'engineer', pipeline: 1, task: calls[i]!.task });
      // The decision comes before the call it refused.
      expect(block.seq!).toBeLessThan(calls[i]!.seq!);
    }
    // What the model read was an error: the trace records each bash call as failed.
    const traced = fs
      .readFileSync(path.join(root, '.team', 'trace.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { kind: string; tool?: string; ok?: boolean })
      .filter((record) => record.kind === 'tool_call' && record.tool === 'bash');
    expect(traced.map((record) => record.ok)).toEqual(calls.map(() => false));
    // The implementation tasks wrote but never ran anything.
    for (const task of stage('implementation')) expect(task.history.map((entry) => entry.event)).not.toContain('ran');

    const read = stdinOf(root, 'pre-bash');
    expect(read).toHaveLength(calls.length);
    for (const [i, input] of read.entries()) {
      expect(input).toMatchObject({
        hook_event_name: 'PreToolUse',
        cwd: root,
        team: path.basename(root),
        pipeline: 1,
        task: calls[i]!.task,
        task_id: calls[i]!.task,
        agent: 'engineer',
        teammate_name: 'engineer',
        role: 'engineer',
        workspace: path.join(root, 'workspace', '1'),
        tool_name: 'bash',
        tool_input: { command: expect.any(String) },
        tool_use_id: expect.any(String),
      });
    }
  });

  it('TaskCompleted blocking a submission: the offline engineer runs it again and submits once more', () => {
    const implementation = stage('implementation')[0]!;
    const verdicts = decisions(events, 'TaskCompleted').filter((d) => d.task === implementation.id);
    expect(verdicts.map((d) => [d.decision, d.agent])).toEqual([
      ['block', 'engineer'],
      ['allow', 'engineer'],
    ]);
    const submits = toolCalls(events, 'submit_for_review').filter((call) => call.task === implementation.id);
    expect(submits.map((call) => call.outcome)).toEqual(['hook_blocked', 'ok']);
    expect(implementation).toMatchObject({ status: 'completed', claims: 1 });
  });

  it('TaskCompleted blocks the first completion: the task stays in progress with its analyst, and completes on the second', () => {
    const analysis = stage('requirements')[0]!;
    const verdicts = decisions(events, 'TaskCompleted').filter((d) => d.task === analysis.id);
    expect(verdicts.map((d) => [d.decision, d.exitCode, d.task, d.agent])).toEqual([
      ['block', 2, analysis.id, 'analyst'],
      ['allow', 0, analysis.id, 'analyst'],
    ]);
    expect(verdicts[0]!.reason).toBe('the analysis needs a second look');
    // The blocked signal was a tool error the analyst read; the second went through.
    expect(toolCalls(events, 'complete_requirements_analysis').map((call) => call.outcome)).toEqual(['hook_blocked', 'ok']);
    // Between the two, the task was neither completed nor handed back; it completed once, after the allow.
    const forTask = events.filter((e) => e.task === analysis.id && ['task_completed', 'task_released', 'task_claimed'].includes(e.type));
    expect(forTask.map((e) => e.type)).toEqual(['task_claimed', 'task_completed']);
    expect(forTask[1]!.seq!).toBeGreaterThan(verdicts[1]!.seq!);
    // The task file as the second call saw it: still in progress, with the same claim.
    const during = JSON.parse(fs.readFileSync(path.join(root, 'hooks', 'completed.task.json'), 'utf8')) as Task;
    expect(during).toMatchObject({ id: analysis.id, status: 'in_progress', owner: 'analyst', claims: 1 });
    expect(analysis).toMatchObject({ status: 'completed', owner: 'analyst', claims: 1 });

    const read = stdinOf(root, 'completed');
    expect(read).toHaveLength(2);
    for (const input of read) {
      expect(input).toMatchObject({
        hook_event_name: 'TaskCompleted',
        pipeline: 1,
        task: analysis.id,
        agent: 'analyst',
        stage: 'requirements',
        subject: analysis.subject,
        task_subject: analysis.subject,
        signal: 'complete_requirements_analysis',
        result: expect.stringMatching(/requirements? .* acceptance criteri/),
      });
    }
  });

  it('a PostToolUse hook that exits 1 warns: the write stands and the run goes on', () => {
    const writes = toolCalls(events, 'write_file');
    expect(writes.length).toBeGreaterThanOrEqual(1);
    for (const call of writes) expect(call.outcome).toBe('ok');
    const warned = decisions(events, 'PostToolUse');
    expect(warned).toHaveLength(writes.length);
    for (const decision of warned) expect(decision).toMatchObject({ decision: 'warn', exitCode: 1, reason: 'style check unavailable', command: WRITE, agent: 'engineer' });
    expect(fs.existsSync(path.join(root, 'workspace', '1', 'organize.py'))).toBe(true);
    const read = stdinOf(root, 'post-write');
    expect(read).toHaveLength(writes.length);
    for (const input of read) {
      expect(input).toMatchObject({ hook_event_name: 'PostToolUse', tool_name: 'write_file', tool_input: { path: expect.stringMatching(/\.py$/) }, outcome: 'ok' });
      expect(input.tool_response).toMatch(/^wrote .+\.py/);
    }
  });

  it('a hook that sleeps past its timeout is killed and warns; the tool then runs', () => {
    const lints = toolCalls(events, 'run_linter');
    expect(lints.length).toBeGreaterThanOrEqual(1);
    const slow = decisions(events, 'PreToolUse').filter((d) => d.command === LINT);
    expect(slow).toHaveLength(lints.length);
    for (const [i, decision] of slow.entries()) {
      expect(decision).toMatchObject({ decision: 'warn', exitCode: null, agent: 'reviewer', role: 'reviewer' });
      expect(decision.reason).toMatch(/^timed out after 1 s; the hook and the processes it started were killed/);
      expect(decision.seq!).toBeLessThan(lints[i]!.seq!);
      expect(lints[i]!.outcome).toBe('ok');
    }
    expect(stdinOf(root, 'pre-lint')).toHaveLength(lints.length);
    for (const input of stdinOf(root, 'pre-lint')) expect(input).toMatchObject({ hook_event_name: 'PreToolUse', tool_name: 'run_linter', agent: 'reviewer' });
    // No other tool reached these matchers.
    expect(new Set(decisions(events, 'PreToolUse').map((d) => d.command))).toEqual(new Set([BASH, LINT]));
  });

  it('PipelineCompleted reads the final status on stdin, once, after the approval', () => {
    const review = tasks.at(-1)!;
    const read = stdinOf(root, 'pipeline');
    expect(read).toHaveLength(1);
    expect(read[0]).toMatchObject({ hook_event_name: 'PipelineCompleted', pipeline: 1, status: 'approved', task: review.id, agent: 'reviewer', reason: expect.stringMatching(/^Pipeline #1 approved/) });
    const [decision] = decisions(events, 'PipelineCompleted');
    expect(decisions(events, 'PipelineCompleted')).toHaveLength(1);
    expect(decision).toMatchObject({ decision: 'allow', exitCode: 0, command: END, pipeline: 1 });
    const approved = events.find((e) => e.type === 'pipeline_status' && e.status === 'approved')!;
    expect(decision!.seq!).toBeGreaterThan(approved.seq!);
    // Every hook run was one decision event, and every decision one hook run.
    const runs = ['pre-bash', 'pre-lint', 'post-write', 'completed', 'implemented', 'pipeline'].reduce((n, name) => n + stdinOf(root, name).length, 0);
    expect(events.filter((e) => e.type === 'hook_decision')).toHaveLength(runs);
  });
});

describe('a TaskCreated hook that blocks', () => {
  it('cancels the task with the hook’s reason, so the pipeline, which PipelineCompleted reads as cancelled', async () => {
    const CREATED = 'sh hooks/hook.sh created 2 "requirements are frozen this week"';
    const root = boardWithHooks({ TaskCreated: [command(CREATED, { matcher: 'requirements' })], PipelineCompleted: [command('sh hooks/hook.sh pipeline 0')] });
    const run = await runCli(['run', '--auto', '--dir', root, DOWNLOADS_REQUIREMENT], { cwd: root, killAfterMs: 120_000 });
    expect(run.code, describeRun(run)).toBe(1);
    expect(run.stdout).toMatch(/pipeline #1: CANCELLED — blocked by a TaskCreated hook: requirements are frozen this week/);

    const [task, ...others] = readTasks(root);
    expect(others).toEqual([]);
    const reason = 'blocked by a TaskCreated hook: requirements are frozen this week';
    expect(task).toMatchObject({ id: 1, stage: 'requirements', status: 'cancelled', owner: null, claims: 0, result: reason });
    expect(task!.history.map((entry) => [entry.by, entry.event])).toEqual([
      ['lead', 'created'],
      ['hook', 'cancelled'],
    ]);

    const events = logOf(root);
    expect(events.filter((e) => e.type === 'task_claimed')).toEqual([]);
    expect(events.find((e) => e.type === 'task_cancelled')).toMatchObject({ task: 1, by: 'hook', reason });
    expect(events.filter((e) => e.type === 'hook_decision').map((e) => [(e as Decision).hook, (e as Decision).decision, (e as Decision).reason])).toEqual([
      ['TaskCreated', 'block', 'requirements are frozen this week'],
      ['PipelineCompleted', 'allow', undefined],
    ]);
    expect(events.filter((e) => e.type === 'pipeline_status').map((e) => (e as { status: string }).status)).toEqual(['active', 'cancelled']);

    expect(stdinOf(root, 'created')).toEqual([
      expect.objectContaining({ hook_event_name: 'TaskCreated', pipeline: 1, task: 1, task_id: 1, stage: 'requirements', by: 'lead', subject: task!.subject, description: DOWNLOADS_REQUIREMENT }),
    ]);
    expect(stdinOf(root, 'pipeline')).toEqual([expect.objectContaining({ hook_event_name: 'PipelineCompleted', pipeline: 1, status: 'cancelled', reason })]);
  }, 150_000);
});

describe.runIf(python)('a hook still running when the run is interrupted', () => {
  it('is killed with everything it started as the team shuts down, never left to finish on its own', async () => {
    // It says its process group (the shell's pid) and its parent (the runtime), then outlasts the test.
    const HANG = 'echo "$$ $PPID" > hooks/running.pid; sleep 300; touch hooks/finished';
    const root = boardWithHooks({ PreToolUse: [command(HANG, { matcher: 'bash', timeout: 600 })] });
    const running = runCli(['run', '--auto', '--dir', root, DOWNLOADS_REQUIREMENT], { cwd: root, killAfterMs: 120_000 });
    const [group, runtime] = await until(() => {
      const ids = fs.readFileSync(path.join(root, 'hooks', 'running.pid'), 'utf8').trim().split(' ').map(Number);
      return ids.length === 2 && ids.every((id) => id > 0) ? ids : null;
    }, 'the engineer’s PreToolUse hook to start');
    process.kill(runtime!, 'SIGINT');
    const run = await running;
    expect(run.code, describeRun(run)).toBe(130);
    // The teammate's shutdown stopped the hook: it was not ended by force after the grace.
    expect(`${run.stdout}${run.stderr}`).not.toMatch(/did not stop within/);
    const alive = () => {
      try {
        process.kill(-group!, 0);
        return true;
      } catch {
        return false;
      }
    };
    // A SIGKILL is taken when the process next runs: a moment on a busy machine, never the hook's 300 s.
    await until(() => !alive(), `the hook's process group ${group} to be gone`, { timeoutMs: 15_000 });
    expect(fs.existsSync(path.join(root, 'hooks', 'finished'))).toBe(false);
  }, 150_000);
});

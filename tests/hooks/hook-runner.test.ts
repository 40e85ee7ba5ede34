/**
 * HookRunner with real hook scripts: each event's JSON reaches the hook on stdin; exit 0 allows, 2
 * blocks with stderr as the reason, anything else warns; matchers pick by tool, stage and status;
 * hooks run in order and the first block wins; Claude Code's JSON answers block where they map;
 * every hook run is one hook_decision event.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { HOOK_EVENTS, type HookEventName } from '../../src/core/events/schema.js';
import type { HooksConfig } from '../../src/core/hooks/config.js';
import { hookFolder, hookRunner, one, PAYLOADS } from './hook-fixture.js';

const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

function run<E extends HookEventName>(runner: ReturnType<typeof hookRunner>['runner'], event: E) {
  return runner.run(event, PAYLOADS[event]);
}

describe('hook input', () => {
  it('every event reaches its hook as JSON on stdin, with what the event carries and the Claude Code names', async () => {
    const dir = hookFolder(made);
    const config: HooksConfig = Object.fromEntries(HOOK_EVENTS.map((event) => [event, [{ hooks: [{ type: 'command', command: `cat > ${event}.json` }] }]]));
    const { runner, events } = hookRunner(dir, config);
    for (const event of HOOK_EVENTS) expect(await run(runner, event)).toEqual({ decision: 'allow' });
    const read = (event: string) => JSON.parse(fs.readFileSync(path.join(dir, `${event}.json`), 'utf8'));
    const where = { team: 'blue', team_name: 'blue', pipeline: 3, cwd: dir };

    expect(read('PreToolUse')).toEqual({
      hook_event_name: 'PreToolUse',
      ...where,
      task: 7,
      task_id: 7,
      agent: 'engineer',
      teammate_name: 'engineer',
      role: 'engineer',
      tool_name: 'bash',
      tool_input: { command: 'rm -rf build' },
      tool_use_id: 'toolu_1',
    });
    expect(read('PostToolUse')).toMatchObject({ hook_event_name: 'PostToolUse', ...where, tool_name: 'write_file', tool_input: { path: 'a.py', content: 'x = 1' }, tool_response: 'wrote a.py (5 bytes)', outcome: 'ok' });
    expect(read('TaskCreated')).toMatchObject({
      hook_event_name: 'TaskCreated',
      ...where,
      task: 7,
      agent: 'lead',
      subject: 'Implement: count words',
      task_subject: 'Implement: count words',
      description: 'wordcount.py',
      task_description: 'wordcount.py',
      stage: 'implementation',
      by: 'analyst',
    });
    expect(read('TaskCompleted')).toMatchObject({ hook_event_name: 'TaskCompleted', ...where, task_id: 7, subject: 'Implement: count words', stage: 'implementation', result: 'submitted wordcount.py', signal: 'submit_for_review', workspace: '/tmp/ws' });
    expect(read('TeammateIdle')).toMatchObject({ hook_event_name: 'TeammateIdle', ...where, task: null, agent: 'engineer', teammate_name: 'engineer', stage: 'implementation', reason: 'no task to claim' });
    expect(read('TeammateIdle')).not.toHaveProperty('task_id');
    expect(read('PipelineCompleted')).toMatchObject({ hook_event_name: 'PipelineCompleted', ...where, task: null, agent: null, status: 'failed', reason: 'review rounds used up' });

    expect(events.map((e) => e.type === 'hook_decision' && `${e.hook}:${e.decision}:${e.exitCode}`)).toEqual(HOOK_EVENTS.map((event) => `${event}:allow:0`));
    expect(events.find((e) => e.type === 'hook_decision' && e.hook === 'PreToolUse')).toMatchObject({ team: 'blue', pipeline: 3, task: 7, agent: 'engineer', role: 'engineer', command: 'cat > PreToolUse.json' });
  });

  it('runs in the board folder with the person’s environment and the task’s folder as AUTOTEAM_WORKSPACE', async () => {
    const dir = hookFolder(made);
    const command = 'printf "%s|%s|%s" "$(pwd -P)" "$HOOK_TEST_OWNER" "$AUTOTEAM_WORKSPACE" >&2; exit 2';
    const { runner } = hookRunner(dir, one('TaskCompleted', command), { env: { PATH: process.env.PATH, HOOK_TEST_OWNER: 'the person' } });
    expect(await run(runner, 'TaskCompleted')).toEqual({ decision: 'block', reason: `${fs.realpathSync(dir)}|the person|/tmp/ws` });
  });
});

describe('decisions', () => {
  it('exit 0 allows, exit 2 blocks with stderr, another exit warns with stderr; one event each', async () => {
    const dir = hookFolder(made);
    const cases = [
      { command: 'echo fine; exit 0', result: { decision: 'allow' }, exitCode: 0 },
      { command: 'echo "tests fail: 3 of 40" >&2; exit 2', result: { decision: 'block', reason: 'tests fail: 3 of 40' }, exitCode: 2 },
      { command: 'exit 2', result: { decision: 'block', reason: 'no reason given (exit 2, nothing on stderr)' }, exitCode: 2 },
      // Each caller says the block in its own words first: no `blocked by a PreToolUse hook` to say twice.
      { command: `echo '{"decision": "block"}'`, result: { decision: 'block', reason: 'no reason given' }, exitCode: 0 },
      { command: 'echo "jq: not found" >&2; exit 127', result: { decision: 'warn', reason: 'jq: not found' }, exitCode: 127 },
      { command: 'exit 1', result: { decision: 'warn', reason: 'exited with 1' }, exitCode: 1 },
      { command: 'kill -TERM $$', result: { decision: 'warn', reason: 'killed by SIGTERM' }, exitCode: null },
    ];
    for (const { command, result, exitCode } of cases) {
      const { runner, events } = hookRunner(dir, one('PreToolUse', command));
      expect(await run(runner, 'PreToolUse'), command).toEqual(result);
      expect(events, command).toHaveLength(1);
      expect(events[0], command).toMatchObject({ type: 'hook_decision', hook: 'PreToolUse', command, exitCode, ...result });
      expect(events[0]!.type === 'hook_decision' && events[0]!.durationMs).toBeGreaterThanOrEqual(0);
    }
  });

  it('a hook that cannot start warns and lets the team go on', async () => {
    const dir = hookFolder(made);
    const missing = path.join(dir, 'not-there');
    const { runner, events } = hookRunner(missing, one('TaskCompleted', 'exit 2'));
    const result = await run(runner, 'TaskCompleted');
    expect(result.decision).toBe('warn');
    expect(result.reason).toMatch(/could not run the hook.*not-there/);
    expect(events).toMatchObject([{ type: 'hook_decision', decision: 'warn', exitCode: null }]);
  });

  it('hooks run in order: warnings add up, the first block wins and later hooks do not run', async () => {
    const dir = hookFolder(made);
    const hooks = (...commands: string[]) => commands.map((command) => ({ type: 'command' as const, command }));
    const config: HooksConfig = {
      TaskCompleted: [
        { matcher: 'implementation', hooks: hooks('echo first >&2; exit 1', 'echo lint is red >&2; exit 2') },
        { hooks: hooks('touch third-ran') },
      ],
    };
    const { runner, events } = hookRunner(dir, config);
    expect(await run(runner, 'TaskCompleted')).toEqual({ decision: 'block', reason: 'lint is red' });
    expect(fs.existsSync(path.join(dir, 'third-ran'))).toBe(false);
    expect(events.map((e) => e.type === 'hook_decision' && e.decision)).toEqual(['warn', 'block']);

    const warnings = hookRunner(dir, { TaskCompleted: [{ hooks: hooks('echo one >&2; exit 1', 'exit 0', 'echo two >&2; exit 3', 'touch last-ran') }] });
    expect(await run(warnings.runner, 'TaskCompleted')).toEqual({ decision: 'warn', reason: 'one\ntwo' });
    expect(fs.existsSync(path.join(dir, 'last-ran'))).toBe(true);
    expect(warnings.events.map((e) => e.type === 'hook_decision' && e.decision)).toEqual(['warn', 'allow', 'warn', 'allow']);
  });

  it('PipelineCompleted cannot be blocked: a block is a warning and the hooks after it still run', async () => {
    const dir = hookFolder(made);
    const config: HooksConfig = { PipelineCompleted: [{ hooks: [{ type: 'command', command: 'echo page someone >&2; exit 2' }, { type: 'command', command: 'touch second-ran' }] }] };
    const { runner, events } = hookRunner(dir, config);
    const result = await run(runner, 'PipelineCompleted');
    expect(result.decision).toBe('warn');
    expect(result.reason).toMatch(/^page someone \(asked to block, but the PipelineCompleted event cannot be blocked\)$/);
    expect(fs.existsSync(path.join(dir, 'second-ran'))).toBe(true);
    expect(events.map((e) => e.type === 'hook_decision' && `${e.decision}:${e.exitCode}`)).toEqual(['warn:2', 'allow:0']);
  });

  it('reads Claude Code’s JSON answer where it maps: permissionDecision deny, decision block', async () => {
    const dir = hookFolder(made);
    const answer = (json: object) => `echo '${JSON.stringify(json)}'`;
    const deny = hookRunner(dir, one('PreToolUse', answer({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'no rm -rf here' } })));
    expect(await run(deny.runner, 'PreToolUse')).toEqual({ decision: 'block', reason: 'no rm -rf here' });
    expect(deny.events).toMatchObject([{ decision: 'block', exitCode: 0, reason: 'no rm -rf here' }]);
    const legacy = hookRunner(dir, one('PreToolUse', answer({ decision: 'block', reason: 'not bash' })));
    expect(await run(legacy.runner, 'PreToolUse')).toEqual({ decision: 'block', reason: 'not bash' });
    const post = hookRunner(dir, one('PostToolUse', answer({ decision: 'block', reason: 'a.py: ruff E501' })));
    expect(await run(post.runner, 'PostToolUse')).toEqual({ decision: 'block', reason: 'a.py: ruff E501' });
    const allow = hookRunner(dir, one('PreToolUse', answer({ hookSpecificOutput: { permissionDecision: 'allow' } })));
    expect(await run(allow.runner, 'PreToolUse')).toEqual({ decision: 'allow' });
    // Claude Code documents no JSON decision for the team events: only the exit code counts there.
    const task = hookRunner(dir, one('TaskCompleted', answer({ decision: 'block', reason: 'ignored' })));
    expect(await run(task.runner, 'TaskCompleted')).toEqual({ decision: 'allow' });
    const text = hookRunner(dir, one('PostToolUse', 'echo "{ not json"; echo decision block'));
    expect(await run(text.runner, 'PostToolUse')).toEqual({ decision: 'allow' });
  });
});

describe('matchers', () => {
  it('tool events match the tool name: plain names exactly, anything else as a regular expression', async () => {
    const dir = hookFolder(made);
    const groups = ['bash', 'read_file|write_file', '^run_', '', '*', undefined, 'bas'].map((matcher, i) => ({ ...(matcher !== undefined ? { matcher } : {}), hooks: [{ type: 'command' as const, command: `exit 0 # ${i}` }] }));
    const { runner, events } = hookRunner(dir, { PreToolUse: groups, PostToolUse: groups });
    const ran = async (event: 'PreToolUse' | 'PostToolUse', tool: string) => {
      events.length = 0;
      await runner.run(event, { ...PAYLOADS.PostToolUse, tool_name: tool });
      return events.map((e) => (e.type === 'hook_decision' ? Number(e.command.slice(9)) : -1));
    };
    expect(await ran('PreToolUse', 'bash')).toEqual([0, 3, 4, 5]);
    expect(await ran('PreToolUse', 'write_file')).toEqual([1, 3, 4, 5]);
    expect(await ran('PostToolUse', 'run_tests')).toEqual([2, 3, 4, 5]);
    expect(await ran('PostToolUse', 'bash_output')).toEqual([3, 4, 5]);
  });

  it('task and idle events match the stage (general when there is none); PipelineCompleted the final status', async () => {
    const dir = hookFolder(made);
    const config: HooksConfig = {
      TaskCompleted: [{ matcher: 'implementation', hooks: [{ type: 'command', command: 'exit 2' }] }],
      TaskCreated: [{ matcher: 'general', hooks: [{ type: 'command', command: 'exit 2' }] }],
      TeammateIdle: [{ matcher: 'review|requirements', hooks: [{ type: 'command', command: 'exit 2' }] }],
      PipelineCompleted: [{ matcher: 'failed|cancelled', hooks: [{ type: 'command', command: 'exit 1' }] }],
    };
    const { runner, events } = hookRunner(dir, config);
    expect((await runner.run('TaskCompleted', PAYLOADS.TaskCompleted)).decision).toBe('block');
    expect((await runner.run('TaskCompleted', { ...PAYLOADS.TaskCompleted, stage: 'reimplementation' })).decision).toBe('allow');
    expect((await runner.run('TaskCompleted', { ...PAYLOADS.TaskCompleted, stage: null })).decision).toBe('allow');
    expect((await runner.run('TaskCreated', PAYLOADS.TaskCreated)).decision).toBe('allow');
    expect((await runner.run('TaskCreated', { ...PAYLOADS.TaskCreated, stage: null })).decision).toBe('block');
    expect((await runner.run('TeammateIdle', PAYLOADS.TeammateIdle)).decision).toBe('allow');
    expect((await runner.run('TeammateIdle', { ...PAYLOADS.TeammateIdle, stage: 'review' })).decision).toBe('block');
    expect((await runner.run('PipelineCompleted', PAYLOADS.PipelineCompleted)).decision).toBe('warn');
    expect((await runner.run('PipelineCompleted', { ...PAYLOADS.PipelineCompleted, status: 'approved' })).decision).toBe('allow');
    expect(events).toHaveLength(4);
    expect(runner.has('TaskCompleted')).toBe(true);
    expect(runner.has('PreToolUse')).toBe(false);
  });
});

/**
 * A hook is bounded: past its timeout it is killed with every process of its group and counts as a
 * warning; an abort does the same; a process that left the group and holds the hook's output cannot
 * keep the team waiting past the timeout; output past the cap is cut, head and tail kept.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_HOOK_OUTPUT_BYTES, LOGGED_REASON_CHARS } from '../../src/core/hooks/runner.js';
import { TeammateHooks } from '../../src/core/agent/teammate-hooks.js';
import type { Task } from '../../src/core/board/schemas.js';
import { EventSink } from '../../src/core/events/emitter.js';
import { gone, hookFolder, hookRunner, one, PAYLOADS, readPid, until } from './hook-fixture.js';

const made: string[] = [];
const strays: number[] = [];
afterEach(() => {
  for (const pid of strays.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

describe('timeouts', () => {
  it('a hook still running at its timeout is killed with its children, warns, and is one event', async () => {
    const dir = hookFolder(made);
    // The shell, a child in the background and a grandchild under it: all in the hook's group.
    const command = 'echo $$ > shell.pid; sh -c \'sleep 600 & echo $! > grandchild.pid; wait\' & echo $! > child.pid; echo started >&2; wait';
    const { runner, events } = hookRunner(dir, one('PreToolUse', command, { timeout: 0.5 }));
    const result = await runner.run('PreToolUse', PAYLOADS.PreToolUse);
    expect(result.decision).toBe('warn');
    expect(result.reason).toBe('timed out after 0.5 s; the hook and the processes it started were killed: started');
    expect(events).toMatchObject([{ type: 'hook_decision', hook: 'PreToolUse', decision: 'warn', exitCode: null, reason: result.reason }]);
    const pids = ['shell', 'child', 'grandchild'].map((name) => readPid(path.join(dir, `${name}.pid`)));
    for (const pid of pids) expect(pid).toBeGreaterThan(0);
    // SIGKILL to the group is already sent when run returns; the kernel finishes them off.
    await until(() => pids.every(gone), `hook processes ${pids.join(', ')} to be gone`);
  });

  it('a process that left the group and holds the output does not hold the decision past the timeout', async () => {
    const dir = hookFolder(made);
    const command = 'setsid sleep 600 & echo $! > escaped.pid; echo "checked" >&2; exit 2';
    const { runner, events } = hookRunner(dir, one('TaskCompleted', command, { timeout: 0.5 }));
    const result = await runner.run('TaskCompleted', PAYLOADS.TaskCompleted);
    const escaped = readPid(path.join(dir, 'escaped.pid'));
    strays.push(escaped);
    // The hook itself exited 2 in time: its answer stands.
    expect(result).toEqual({ decision: 'block', reason: 'checked' });
    expect(events).toMatchObject([{ decision: 'block', exitCode: 2 }]);
    expect(gone(escaped)).toBe(false);
  });

  it('a hook that exits and leaves a job holding its output is answered when it exits, not at its timeout', async () => {
    const dir = hookFolder(made);
    // The job is the hook's to start (a notifier): left running, but its open pipes do not hold the
    // decision; what it writes after the answer meets an open pipe (a closed one would end it).
    const command = '(until [ -e answered ]; do sleep 0.05; done; echo "the notifier writes on" >&2; touch wrote; sleep 600) & echo $! > job.pid; echo "blocked: started a notifier" >&2; exit 2';
    const { runner, events } = hookRunner(dir, one('PreToolUse', command, { timeout: 60 }));
    const result = await runner.run('PreToolUse', PAYLOADS.PreToolUse);
    const job = readPid(path.join(dir, 'job.pid'));
    strays.push(job);
    // The shell's answer, with what it wrote just before it exited.
    expect(result).toEqual({ decision: 'block', reason: 'blocked: started a notifier' });
    expect(events).toMatchObject([{ type: 'hook_decision', decision: 'block', exitCode: 2 }]);
    // Answered at its exit and a moment's grace for the output, not at its timeout a minute on.
    expect((events[0] as { durationMs: number }).durationMs).toBeLessThan(5_000);
    fs.writeFileSync(path.join(dir, 'answered'), '');
    await until(() => fs.existsSync(path.join(dir, 'wrote')), 'the job to write after the answer');
    expect(gone(job)).toBe(false);
  });

  it('an abort kills the running hook, warns, and runs no later hook', async () => {
    const dir = hookFolder(made);
    const config = { TeammateIdle: [{ hooks: [{ type: 'command' as const, command: 'echo $$ > shell.pid; sleep 600 & echo $! > child.pid; wait' }, { type: 'command' as const, command: 'touch later-ran' }] }] };
    const { runner, events } = hookRunner(dir, config);
    const abort = new AbortController();
    const running = runner.run('TeammateIdle', PAYLOADS.TeammateIdle, { signal: abort.signal });
    await until(() => fs.existsSync(path.join(dir, 'child.pid')) && fs.readFileSync(path.join(dir, 'child.pid'), 'utf8').trim() !== '', 'the hook to start');
    abort.abort();
    const result = await running;
    expect(result.decision).toBe('warn');
    expect(result.reason).toMatch(/^canceled; the hook and the processes it started were killed/);
    expect(events).toHaveLength(1);
    expect(fs.existsSync(path.join(dir, 'later-ran'))).toBe(false);
    const pids = ['shell', 'child'].map((name) => readPid(path.join(dir, `${name}.pid`)));
    await until(() => pids.every(gone), 'the aborted hook to be gone');
  });

  it('a hook still running when its process exits is killed with its group, not left running on its own', async () => {
    const dir = hookFolder(made);
    // A process that runs a hook (the lead's TaskCreated, say) and exits while it sleeps: a run ended by Ctrl+C.
    const started = JSON.stringify(path.join(dir, 'child.pid'));
    const program = `import { runHookProcess } from ${JSON.stringify(new URL('../../src/core/hooks/hook-process.ts', import.meta.url).pathname)};
import fs from 'node:fs';
void runHookProcess('echo $$ > shell.pid; sleep 600 & echo $! > child.pid; wait; touch finished', { cwd: ${JSON.stringify(dir)}, env: process.env, input: '', timeoutMs: 600_000, maxOutputBytes: 1024 });
setInterval(() => { if (fs.existsSync(${started}) && fs.readFileSync(${started}, 'utf8').trim()) process.exit(0); }, 10);`;
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', program], { cwd: new URL('../..', import.meta.url).pathname, encoding: 'utf8', timeout: 60_000 });
    expect(child.status, child.stderr).toBe(0);
    const pids = ['shell', 'child'].map((name) => readPid(path.join(dir, `${name}.pid`)));
    strays.push(...pids);
    await until(() => pids.every(gone), 'the hook left by its exited process to be gone');
    expect(fs.existsSync(path.join(dir, 'finished'))).toBe(false);
  });

  it('a hook that does not read its input still runs (the input is large)', async () => {
    const dir = hookFolder(made);
    const { runner } = hookRunner(dir, one('PostToolUse', 'echo ignored >&2; exit 2'));
    const result = await runner.run('PostToolUse', { ...PAYLOADS.PostToolUse, tool_response: 'y'.repeat(1_000_000) });
    expect(result).toEqual({ decision: 'block', reason: 'ignored' });
  });
});

describe('output cap', () => {
  it('stderr past 64 KiB is cut in the middle, keeping the head and the verdict at the end', async () => {
    const dir = hookFolder(made);
    const command = "echo FIRST >&2; head -c 300000 /dev/zero | tr '\\0' x >&2; echo >&2; echo '3 tests failed' >&2; exit 2";
    const { runner, events } = hookRunner(dir, one('TaskCompleted', command));
    const result = await runner.run('TaskCompleted', PAYLOADS.TaskCompleted);
    expect(result.decision).toBe('block');
    const reason = result.reason!;
    expect(reason.startsWith('FIRST\nxxx')).toBe(true);
    expect(reason.endsWith('xxx\n3 tests failed')).toBe(true);
    expect(reason).toMatch(/\n…\[\d+ more bytes cut\]…\n/);
    expect(reason.length).toBeLessThanOrEqual(DEFAULT_HOOK_OUTPUT_BYTES + 40);
    expect(reason.length).toBeGreaterThan(DEFAULT_HOOK_OUTPUT_BYTES - 10);
    // The agent reads it all; the log keeps the start and the end, and says it cut the rest.
    const logged = events[0]!.type === 'hook_decision' ? events[0]!.reason! : '';
    expect(logged.startsWith('FIRST\nxxx')).toBe(true);
    expect(logged.endsWith('xxx\n3 tests failed')).toBe(true);
    expect(logged).toMatch(/\n… cut: [\d.]+ KB more; not kept in the log …\n/);
    expect(logged.length).toBeLessThan(LOGGED_REASON_CHARS + 100);
  });

  it('the cap is the runner’s option, and stdout is cut the same way (a cut JSON answer is no answer)', async () => {
    const dir = hookFolder(made);
    const json = JSON.stringify({ decision: 'block', reason: 'z'.repeat(5000) });
    const { runner } = hookRunner(dir, one('PostToolUse', `echo '${json}'; head -c 5000 /dev/zero | tr '\\0' e >&2; exit 1`), { maxOutputBytes: 1000 });
    const result = await runner.run('PostToolUse', PAYLOADS.PostToolUse);
    expect(result.decision).toBe('warn');
    expect(result.reason).toMatch(/^e{600}\n…\[4000 more bytes cut\]…\ne{400}$/);
    const cut = hookRunner(dir, one('PostToolUse', `echo '${json}'`), { maxOutputBytes: 1000 });
    expect(await cut.runner.run('PostToolUse', PAYLOADS.PostToolUse)).toEqual({ decision: 'allow' });
  });
});

describe("a teammate's checks cut short by its stop", () => {
  it('decide nothing: the guarded call and the completion do not go ahead, never allowed for a shutdown', async () => {
    const dir = hookFolder(made);
    const config = {
      PreToolUse: [{ matcher: 'write_file', hooks: [{ type: 'command' as const, command: 'echo $$ > pre.pid; sleep 600' }] }],
      TaskCompleted: [{ hooks: [{ type: 'command' as const, command: 'echo $$ > done.pid; sleep 600' }] }],
    };
    const hooks = new TeammateHooks(config, dir, new EventSink(null, () => 'team'));
    const gate = hooks.gate(() => ({ team: 'team', agent: 'engineer', role: 'engineer', task: null }))!;
    const stop = new AbortController();
    const pre = gate.before('write_file', { path: 'a.txt', content: 'x' }, 'toolu_1', stop.signal);
    await until(() => fs.existsSync(path.join(dir, 'pre.pid')) && fs.readFileSync(path.join(dir, 'pre.pid'), 'utf8').trim() !== '', 'the PreToolUse hook to start');
    stop.abort();
    expect(await pre).toBe('stopped before the hooks decided');
    // Already stopped: a tool with no hook of its own is not run either, and a completion is not allowed.
    expect(await gate.before('read_file', { path: 'a.txt' }, 'toolu_2', stop.signal)).toBe('stopped before the hooks decided');
    const task = { id: 1, pipeline: null, subject: 'Say hi', description: '', stage: null } as unknown as Task;
    expect(await hooks.taskCompleted({ team: 'team', agent: 'engineer', role: 'engineer', task }, 'done', stop.signal)).toBe('stopped before the hooks decided');
    // Not stopped, nothing blocks: allowed as before.
    expect(await gate.before('read_file', { path: 'a.txt' }, 'toolu_3', new AbortController().signal)).toBeNull();
  });
});

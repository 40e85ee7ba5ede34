import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { EventSink } from '../../src/core/events/emitter.js';
import { type TeamEvent, TeamEventSchema } from '../../src/core/events/schema.js';
import type { HooksConfig } from '../../src/core/hooks/config.js';
import type { HookPayloads } from '../../src/core/hooks/payload.js';
import { HookRunner, type HookRunnerOptions } from '../../src/core/hooks/runner.js';

/** A board folder of its own, removed by `cleanup`. */
export function hookFolder(made: string[]): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-hooks-'));
  made.push(dir);
  return dir;
}

/** A runner on `dir` whose decisions go through a real EventSink (no log) into `events`, checked against the schema. */
export function hookRunner(dir: string, config: HooksConfig, options: Partial<HookRunnerOptions> = {}): { runner: HookRunner; events: TeamEvent[] } {
  const events: TeamEvent[] = [];
  const sink = new EventSink(null, () => 'blue');
  sink.tap((event) => events.push(TeamEventSchema.parse(event)));
  const runner = new HookRunner(config, { cwd: dir, emit: (event) => sink.emit(event), ...options });
  return { runner, events };
}

/** One command hook for `event`, with an optional matcher and timeout (seconds). */
export function one(event: keyof HooksConfig, command: string, extra: { matcher?: string; timeout?: number } = {}): HooksConfig {
  const { matcher, timeout } = extra;
  return { [event]: [{ ...(matcher !== undefined ? { matcher } : {}), hooks: [{ type: 'command', command, ...(timeout !== undefined ? { timeout } : {}) }] }] };
}

const where = { team: 'blue', pipeline: 3, task: 7, agent: 'engineer', role: 'engineer' } as const;

export const PAYLOADS: { [E in keyof HookPayloads]: HookPayloads[E] } = {
  PreToolUse: { ...where, tool_name: 'bash', tool_input: { command: 'rm -rf build' }, tool_use_id: 'toolu_1' },
  PostToolUse: { ...where, tool_name: 'write_file', tool_input: { path: 'a.py', content: 'x = 1' }, tool_response: 'wrote a.py (5 bytes)', outcome: 'ok' },
  TaskCreated: { ...where, agent: 'lead', role: 'lead', subject: 'Implement: count words', description: 'wordcount.py', stage: 'implementation', by: 'analyst' },
  TaskCompleted: { ...where, subject: 'Implement: count words', stage: 'implementation', result: 'submitted wordcount.py', signal: 'submit_for_review', workspace: '/tmp/ws' },
  TeammateIdle: { ...where, task: null, stage: 'implementation', reason: 'no task to claim' },
  PipelineCompleted: { ...where, task: null, agent: null, status: 'failed', reason: 'review rounds used up' },
};

/** Whether the process is gone (a zombie is gone: it has exited and only waits to be reaped). */
export function gone(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
}

/** Waits for `ready` with a generous ceiling (the state, not the time, is what the test needs). */
export async function until(ready: () => boolean, what: string, ceilingMs = 20_000): Promise<void> {
  const end = Date.now() + ceilingMs;
  while (!ready()) {
    if (Date.now() > end) throw new Error(`gave up waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export function readPid(file: string): number {
  return Number(fs.readFileSync(file, 'utf8').trim());
}

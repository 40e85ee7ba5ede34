/**
 * `hooks` in autoteam.config.json: Claude Code's shape, read into ProjectConfig.hooks; every mistake
 * (an unknown event, a bad regex, a timeout that is not positive, a type other than command, a key
 * that is not ours) is a ConfigError naming the file and the key path.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CONFIG_FILE, loadProjectConfig } from '../../src/core/config/project-config.js';
import { ConfigError } from '../../src/core/errors.js';
import type { HooksConfig } from '../../src/core/hooks/config.js';
import { HookRunner } from '../../src/core/hooks/runner.js';
import { hookFolder } from './hook-fixture.js';

const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

function withConfig(hooks: unknown): string {
  const dir = hookFolder(made);
  fs.writeFileSync(path.join(dir, CONFIG_FILE), JSON.stringify({ hooks }));
  return dir;
}

function failure(hooks: unknown): string {
  const dir = withConfig(hooks);
  try {
    loadProjectConfig(dir);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    expect(message.startsWith(`${path.join(dir, CONFIG_FILE)}: `)).toBe(true);
    return message.slice(path.join(dir, CONFIG_FILE).length + 2);
  }
  throw new Error('the config loaded');
}

const command = (extra: object = {}) => ({ type: 'command', command: 'exit 0', ...extra });

describe('hooks in autoteam.config.json', () => {
  it('loads the README’s example and Claude Code’s shape as it is', () => {
    const hooks = {
      TaskCompleted: [{ matcher: 'implementation', hooks: [{ type: 'command', command: 'cd "$AUTOTEAM_WORKSPACE" && npm test --silent >&2 || exit 2', timeout: 300 }] }],
      PreToolUse: [{ matcher: 'bash|execute_code', hooks: [command({ timeout: 5 })] }, { hooks: [command()] }],
      PipelineCompleted: [{ matcher: '', hooks: [command()] }, { matcher: '*', hooks: [] }],
    };
    expect(loadProjectConfig(withConfig(hooks)).hooks).toEqual(hooks);
    expect(loadProjectConfig(withConfig({})).hooks).toEqual({});
    expect(loadProjectConfig(hookFolder(made)).hooks).toBeUndefined();
  });

  it('names the key path of each mistake', () => {
    expect(failure({ Stop: [{ hooks: [command()] }] })).toBe("hooks.Stop: unknown hook event 'Stop' (events: TaskCreated, TaskCompleted, TeammateIdle, PreToolUse, PostToolUse, PipelineCompleted)");
    expect(failure({ PreToolUse: [{ matcher: 'bash(', hooks: [command()] }] })).toMatch(/^hooks\.PreToolUse\.0\.matcher: not a valid regular expression \(.*Unterminated group\)$/);
    expect(failure({ PostToolUse: [{ hooks: [command()] }, { hooks: [command(), command({ timeout: 0 })] }] })).toBe('hooks.PostToolUse.1.hooks.1.timeout: seconds, more than 0');
    expect(failure({ TaskCompleted: [{ hooks: [command({ timeout: -5 })] }] })).toBe('hooks.TaskCompleted.0.hooks.0.timeout: seconds, more than 0');
    expect(failure({ TaskCompleted: [{ hooks: [command({ timeout: '30' })] }] })).toBe('hooks.TaskCompleted.0.hooks.0.timeout: seconds, a number');
    expect(failure({ TaskCreated: [{ hooks: [{ type: 'prompt', command: 'x' }] }] })).toBe('hooks.TaskCreated.0.hooks.0.type: only "command" hooks are supported (a shell command run with /bin/sh -c)');
    expect(failure({ TeammateIdle: [{ hooks: [{ type: 'command', command: '' }] }] })).toBe('hooks.TeammateIdle.0.hooks.0.command: the shell command to run (not empty)');
    expect(failure({ TeammateIdle: [{ hooks: [command({ async: true })] }] })).toMatch(/^hooks\.TeammateIdle\.0\.hooks\.0: Unrecognized key: "async"$/);
    expect(failure({ PreToolUse: { matcher: 'bash' } })).toMatch(/^hooks\.PreToolUse: /);
    expect(failure([])).toMatch(/^hooks: /);
  });

  it('warns at start of a matcher name that nothing has, with the nearest; regular expressions and MCP tools are taken as they are', () => {
    const config = loadProjectConfig(
      withConfig({
        PreToolUse: [{ matcher: 'bsh|write_file', hooks: [command()] }, { matcher: 'create_task|mcp__files__read', hooks: [command()] }, { matcher: '^run_', hooks: [command()] }],
        TaskCompleted: [{ matcher: 'implementaton', hooks: [command()] }, { matcher: 'review|general', hooks: [command()] }],
        PipelineCompleted: [{ matcher: 'aproved', hooks: [command()] }, { matcher: 'zzz', hooks: [command()] }],
      }),
    );
    expect(config.warnings).toEqual([
      "hooks.PreToolUse.0.matcher: 'bsh' is no tool's name, so it never matches (did you mean bash?)",
      "hooks.TaskCompleted.0.matcher: 'implementaton' is no stage's name, so it never matches (did you mean implementation?)",
      "hooks.PipelineCompleted.0.matcher: 'aproved' is no pipeline status's name, so it never matches (did you mean approved?)",
      "hooks.PipelineCompleted.1.matcher: 'zzz' is no pipeline status's name, so it never matches (one of: approved, failed, cancelled)",
    ]);
  });

  it('HookRunner checks what it is given the same way', () => {
    const make = (config: unknown) => () => new HookRunner(config as HooksConfig, { cwd: '.', emit: () => undefined });
    expect(make({ PreToolUse: [{ matcher: '[', hooks: [command()] }] })).toThrow(ConfigError);
    expect(make({ PreToolUse: [{ matcher: '[', hooks: [command()] }] })).toThrow(/^hooks\.PreToolUse\.0\.matcher: not a valid regular expression/);
    expect(make({ Notification: [] })).toThrow(/^hooks\.Notification: unknown hook event/);
    expect(make({ PreToolUse: [{ hooks: [{ type: 'command' }] }] })).toThrow(/^hooks\.PreToolUse\.0\.hooks\.0\.command: missing \(a string is expected\)$/);
    expect(make(undefined)().has('PreToolUse')).toBe(false);
  });
});

/**
 * How the offline model tells a run that could not start its interpreter (exit 127) from one that
 * failed: the command is named from the run's stderr, as the shell or the sandbox's launcher says it.
 */
import { describe, expect, it } from 'vitest';
import { commandNotFound } from '../../src/core/model/scripted/conversation.js';

const ran = (name: string, content: string) => ({ name, input: {}, result: { content, isError: false } });

describe('commandNotFound', () => {
  it.each([
    ['bash', ran('bash', 'exit 127 (12 ms)\nstderr:\nbash: line 1: python3: command not found'), 'python3'],
    ['dash', ran('bash', 'exit 127 (9 ms)\nstderr:\nsh: 1: exec: node: not found'), 'node'],
    ['the launcher, under a check', ran('run_check', 'CHK1: FAIL [python] exit 127 (41 ms)\nstderr:\nprlimit: failed to execute python3: No such file or directory'), 'python3'],
    ['the last of two, the one that ended the run', ran('bash', 'exit 127 (9 ms)\nstderr:\nbash: line 1: tput: command not found\nbash: line 2: python3: command not found'), 'python3'],
  ])('names the command, as %s says it', (_who, call, command) => {
    expect(commandNotFound(call)).toBe(command);
  });

  it('is null for any other result: another exit, no stderr, or only the program saying "not found"', () => {
    expect(commandNotFound(ran('bash', 'exit 1 (9 ms)\nstderr:\nbash: line 1: python3: command not found'))).toBeNull();
    expect(commandNotFound(ran('bash', 'exit 127 (9 ms)\nstdout:\nreport.pdf: not found'))).toBeNull();
    expect(commandNotFound(ran('run_check', 'CHK2: PASS [python] exit 0 (9 ms)\nstdout:\nOK'))).toBeNull();
    expect(commandNotFound(undefined)).toBeNull();
  });
});

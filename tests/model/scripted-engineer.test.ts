/**
 * The offline engineer's answer to a submission refused twice (a TaskCompleted hook that always
 * blocks): it gives up, and its reason leads with the refusal, not with the model. A run that could
 * not start its interpreter (exit 127) fails the task naming the command, at once.
 */
import { describe, expect, it } from 'vitest';
import { engineerTurn } from '../../src/core/model/scripted/engineer.js';
import type { HandoffData } from '../../src/core/stages/handoff.js';

const handoff: HandoffData = {
  stage: 'implementation',
  revision: 0,
  requirement: 'Write a Python script that counts the words in a text file.',
  requirements: {},
  qa: [],
  criteria: [],
  issues: [],
  previousIssues: [],
};
const refused = { name: 'submit_for_review', input: { file: 'wordcount.py' }, result: { content: 'Blocked by a hook: tests are red\nmore', isError: true } };

describe('the offline engineer after refused submissions', () => {
  it('runs the program again after the first refusal', () => {
    const turn = engineerTurn(handoff, [refused]);
    expect(turn.calls?.map((call) => call.name)).toEqual(['bash']);
  });

  it('gives up after the second, naming the refusal first', () => {
    const turn = engineerTurn(handoff, [refused, { name: 'bash', input: {}, result: { content: 'exit 0', isError: false } }, refused]);
    expect(turn.calls).toEqual([{ name: 'fail_task', input: { reason: expect.stringMatching(/^its submission was refused twice: Blocked by a hook: tests are red \(the offline model cannot act on what a refusal says — set ANTHROPIC_API_KEY/) } }]);
    expect(JSON.stringify(turn.calls)).not.toMatch(/cannot implement this requirement/);
  });
});

describe('the offline engineer when its run cannot find a command (exit 127)', () => {
  const wrote = { name: 'write_file', input: { path: 'wordcount.py', content: 'x' }, result: { content: 'wrote wordcount.py', isError: false } };
  const ran = (content: string) => ({ name: 'bash', input: {}, result: { content, isError: false } });

  it.each([
    ['bash', 'exit 127 (12 ms)\nstderr:\nbash: line 1: python3: command not found'],
    ['dash', 'exit 127 (9 ms)\nstderr:\nsh: 1: exec: python3: not found'],
  ])("fails the task naming it, as %s says it, instead of rewriting and submitting what cannot run", (_shell, content) => {
    const turn = engineerTurn(handoff, [wrote, ran(content)]);
    expect(turn.calls).toEqual([{ name: 'fail_task', input: { reason: 'the run of wordcount.py could not find `python3` on this machine (exit 127): install python3 or add it to PATH, then run again' } }]);
    expect(turn.text).toBe('python3 is not found here.');
  });

  it("names the command the shell could not find, never a line of the program's own output", () => {
    const turn = engineerTurn(handoff, [wrote, ran('exit 127 (12 ms)\nstdout:\nreport.pdf: not found\nstderr:\nbash: line 1: sort: command not found')]);
    expect(turn.calls).toEqual([{ name: 'fail_task', input: { reason: expect.stringMatching(/^the run of wordcount\.py could not find `sort` on this machine/) } }]);
  });

  it('rewrites the program after any other failed run, as before', () => {
    expect(engineerTurn(handoff, [wrote, ran('exit 1 (12 ms)\nstderr:\nTraceback: python3: not found in the list')]).calls?.map((call) => call.name)).toEqual(['write_file']);
    expect(engineerTurn(handoff, [wrote, ran('exit 127 (12 ms)\nstdout:\nnothing said')]).calls?.map((call) => call.name)).toEqual(['write_file']);
  });
});

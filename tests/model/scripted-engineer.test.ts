/**
 * The offline engineer's answer to a submission refused twice (a TaskCompleted hook that always
 * blocks): it gives up, and its reason leads with the refusal, not with the model.
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

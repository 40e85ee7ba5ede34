import { describe, expect, it } from 'vitest';
import { applyControls } from '../../src/ui/input-line.js';
import { leadTurn } from '../../src/core/model/scripted/lead.js';

describe('keys that arrive in one chunk with text', () => {
  it('applies Backspace/DEL and drops Tab and other controls instead of putting them in the line', () => {
    expect(applyControls('/te\t')).toBe('/te');
    expect(applyControls('/scr\x7f\x7feate')).toBe('/seate');
    expect(applyControls('ab\bc')).toBe('ac');
    expect(applyControls('a\x1bb')).toBe('ab');
    expect(applyControls('plain text')).toBe('plain text');
    expect(applyControls('line one\rline two')).toBe('line one\rline two');
  });
});

describe('the offline lead', () => {
  it('posts "create a task to …" as one general task, a requirement as a pipeline, and asks for more on a fragment', () => {
    expect(leadTurn('create a task to run `ls`', []).calls).toEqual([{ name: 'create_task', input: { subject: 'run `ls`', description: 'run `ls`' } }]);
    expect(leadTurn('Write a Python script that prints hello', []).calls).toEqual([
      { name: 'create_task', input: { requirement: 'Write a Python script that prints hello' } },
    ]);
    expect(leadTurn('abcdef', []).calls).toEqual([]);
    expect(leadTurn('how is the board doing?', []).calls).toEqual([{ name: 'list_tasks', input: {} }]);
  });
});

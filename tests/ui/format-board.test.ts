/**
 * `/tasks` and `autoteam tasks`: with several pipelines on the board each task line names its own
 * (`p2`, as the activity lines do), so two `Implement: Write a Python script that…` are told apart;
 * and the lines keep to the width they are given.
 */
import { describe, expect, it } from 'vitest';
import { TaskSchema, type Task } from '../../src/core/board/schemas.js';
import { formatBoard } from '../../src/frontend/format.js';

const at = '2026-12-07T00:00:00.000Z';
const task = (id: number, pipeline: number, subject: string, stage: string): Task =>
  TaskSchema.parse({ id, subject, description: '', status: 'pending', owner: null, role: 'engineer', stage, blockedBy: [], blocks: [], pipeline, revision: 0, claims: 0, lease: null, handoff: '', artifacts: {}, result: null, history: [], notBefore: null, createdAt: at, updatedAt: at });

describe('formatBoard', () => {
  it('names each task line its pipeline when there are several, and keeps each line to the width', () => {
    const subject = 'Implement: Write a Python script that counts the words in a text file.';
    const lines = formatBoard([task(3, 1, subject, 'implementation'), task(4, 2, subject, 'implementation')], 80).split('\n');
    expect(lines.slice(0, 2)).toEqual([
      '[ ] p1 #3: Implement: Write a Python script that counts the wo… (implementation)',
      '[ ] p2 #4: Implement: Write a Python script that counts the wo… (implementation)',
    ]);
    for (const line of lines.slice(0, 2)) expect(line.length).toBeLessThanOrEqual(80);
  });

  it("breaks a pipeline's line longer than the terminal between words, indented under its text; piped, it stays one line", () => {
    const failed = { ...task(5, 3, 'Implement: x', 'implementation'), status: 'failed' as const, result: 'the offline model cannot implement this requirement — set ANTHROPIC_API_KEY, or OPENAI_API_KEY / OPENAI_BASE_URL, to run it on a model' };
    const lines = formatBoard([failed], 80, true).split('\n').slice(1);
    expect(lines).toEqual([
      'pipeline #3 failed · 0 model calls · 0 tokens — the offline model cannot',
      '            implement this requirement — set ANTHROPIC_API_KEY, or',
      '            OPENAI_API_KEY / OPENAI_BASE_URL, to run it on a model',
    ]);
    for (const line of lines) expect(line.length).toBeLessThan(80);
    expect(formatBoard([failed]).split('\n').slice(1)).toEqual([`pipeline #3 failed · 0 model calls · 0 tokens — ${failed.result}`]);
  });

  it('leaves the tag out for one pipeline, where it would say nothing', () => {
    expect(formatBoard([task(1, 1, 'Analyse: x', 'requirements'), task(2, 1, 'Implement: x', 'implementation')]).split('\n').slice(0, 2)).toEqual(['[ ] #1: Analyse: x (requirements)', '[ ] #2: Implement: x (implementation)']);
  });
});

/**
 * What a replay says when the recording lacks a call: a task number the recording never saw is the
 * board numbering its tasks otherwise (a replay where the recorded run already left tasks), not a
 * recording to make again; and the board check `run` makes before it posts anything.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ModelError } from '../../src/core/errors.js';
import { recordedTaskIds, recordFolderProblem, replayBoardProblem, ReplayModel } from '../../src/core/model/recording.js';
import { tempDir } from '../helpers/temp-dirs.js';

function recording(...keys: string[]): string {
  const dir = tempDir('autoteam-replay-keys-');
  for (const key of keys) {
    const call = { key, request: { system: '', messages: [{ role: 'user', content: 'hi' }], tools: [] }, response: { content: [{ type: 'text', text: 'done' }], stopReason: 'end_turn', usage: { inputTokens: 1, outputTokens: 1 }, model: 'm' } };
    fs.writeFileSync(path.join(dir, `${key}.json`), JSON.stringify(call));
  }
  return dir;
}

const ask = (role: string, task: number) => ({ system: '', messages: [{ role: 'user' as const, content: 'hi' }], tools: [], agent: { name: role, role, stage: null, task, purpose: 'work' as const } });

describe('replay keys', () => {
  it('a task the recording never saw is said to be numbered otherwise; a missing turn of a known task is a recording to make again', async () => {
    const dir = recording('analyst.task-1.work.001', 'engineer.task-2.work.001', 'user.task-1.simulated_user.001');
    expect(recordedTaskIds(dir)).toEqual([1, 2]);
    await expect(new ReplayModel(dir).create(ask('analyst', 6))).rejects.toThrow(
      `the recording in ${dir} holds no call analyst.task-6.work.001; it holds calls for tasks #1–#2, not #6: the run went further than the recorded one, or its board numbered the tasks from later on (replay on a board like the recorded one, an empty folder for a run recorded on one; or re-record it)`,
    );
    const later = recording('analyst.task-4.work.001');
    await expect(new ReplayModel(later).create(ask('analyst', 1))).rejects.toThrow(
      `the recording in ${later} holds no call analyst.task-1.work.001; it holds calls for task #4, not #1: replay on a board that numbers the tasks as the recorded one did`,
    );
    const model = new ReplayModel(dir);
    await model.create(ask('analyst', 1));
    await expect(model.create(ask('analyst', 1))).rejects.toThrow(`the recording in ${dir} holds no call analyst.task-1.work.002: the run asked something it does not hold (re-record it)`);
  });

  it('a recorded call cut short, or of another shape, is a fatal error naming its file, not a call served or a model error retried past', async () => {
    const dir = recording('analyst.task-1.work.001', 'analyst.task-1.work.002');
    const cut = path.join(dir, 'analyst.task-1.work.001.json');
    fs.writeFileSync(cut, fs.readFileSync(cut, 'utf8').slice(0, 40));
    fs.writeFileSync(path.join(dir, 'analyst.task-1.work.002.json'), '{}');
    const model = new ReplayModel(dir);
    const first = await model.create(ask('analyst', 1)).catch((error: unknown) => error as ModelError);
    expect(first).toBeInstanceOf(ModelError);
    expect((first as ModelError).code).toBe('REPLAY_MISSING');
    expect((first as ModelError).message).toMatch(new RegExp(`^${cut.replaceAll('.', '\\.')}: not a recorded call \\(.*JSON.*\\): re-record it$`));
    await expect(model.create(ask('analyst', 1))).rejects.toThrow(`${path.join(dir, 'analyst.task-1.work.002.json')}: not a recorded call (request: `);
  });

  it("a call about a task whose statement differs past its heading (a long requirement's heading is cut short) is about another task", async () => {
    const dir = tempDir('autoteam-replay-statement-');
    const subject = 'Analyse: Write a Python script that organizes my Downloads folder by…';
    const context = (description: string) => ({ task: { id: 1, subject, description, stage: 'requirements', requirePlan: false } });
    const call = { key: 'analyst.task-1.work.001', request: { system: '', messages: [{ role: 'user', content: 'hi' }], tools: [], context: context('Write a Python script that organizes my Downloads folder by file type.') }, response: { content: [{ type: 'text', text: 'done' }], stopReason: 'end_turn', usage: { inputTokens: 1, outputTokens: 1 } } };
    fs.writeFileSync(path.join(dir, 'analyst.task-1.work.001.json'), JSON.stringify(call));
    await expect(new ReplayModel(dir).create(ask('analyst', 1), context('Write a Python script that organizes my Downloads folder by file type, in Rust.'))).rejects.toThrow(
      "the run's call analyst.task-1.work.001 is about another task than the recording's (recorded: 'Write a Python script that organizes my Downloads folder by file type.'; now: 'Write a Python script that organizes my Downloads folder by file type, in Rust.'): replay the run that was recorded",
    );
    await expect(new ReplayModel(dir).create(ask('analyst', 1), context('Write a Python script that organizes my Downloads folder by file type.'))).resolves.toMatchObject({ stopReason: 'end_turn' });
  });

  it('a recording is not made over another: a folder holding recorded calls is refused, an empty one or one of other files taken', () => {
    const dir = recording('analyst.task-1.work.001', 'user.task-none.simulated_user.001');
    expect(recordFolderProblem(dir)).toBe('holds a recording already (2 calls): record into an empty folder, or remove that one first');
    const other = tempDir('autoteam-record-other-');
    fs.writeFileSync(path.join(other, 'notes.json'), '{}');
    expect(recordFolderProblem(other)).toBeNull();
    expect(recordFolderProblem(path.join(other, 'new', 'rec'))).toBeNull();
    expect(fs.statSync(path.join(other, 'new', 'rec')).isDirectory()).toBe(true);
  });

  it("refuses a board whose next task is not the recording's first, and takes one that is", () => {
    const dir = recording('analyst.task-4.work.001', 'reviewer.task-6.work.001');
    expect(replayBoardProblem(dir, [])).toBe(`--replay ${dir}: the recording's first task is #4, and this board's next task would be #1: a replay finds each call by its task's number, so run it on a board that numbers the tasks as the recorded one did`);
    expect(replayBoardProblem(dir, [{ id: 1 }, { id: 3 }])).toBeNull();
    const empty = recording();
    expect(replayBoardProblem(empty, [{ id: 9 }])).toBe(`--replay ${empty}: the folder holds no recorded calls (a recording is made with --record <folder>)`);
    const file = `${dir}/analyst.task-4.work.001.json`;
    expect(replayBoardProblem(file, [])).toBe(`--replay ${file}: is a file, not a folder of recorded calls`);
    // No folder there: said as the replay itself says it, not as a failed directory read.
    expect(replayBoardProblem(`${dir}/nope`, [])).toBe(`--replay ${dir}/nope: no such folder`);
  });
});

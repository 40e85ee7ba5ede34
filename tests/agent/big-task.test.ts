import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { estimateTokens } from '../../src/core/agent/compaction.js';
import { TaskBoard } from '../../src/core/board/task-board.js';
import { MAX_TASK_FILE_BYTES, readTaskFile } from '../../src/core/board/task-file.js';
import { FakeModel, reply, toolUse } from '../helpers/fake-model.js';
import { makeTeam, type LocalTeammate, startLocalTeammate } from '../helpers/agent-team.js';
import { removeBoard, tempBoard, until } from '../helpers/agent-wait.js';

describe('a hand-written task just under the 5 MB file limit', () => {
  let root = '';
  let running: LocalTeammate | null = null;
  afterEach(async () => {
    await running?.halt();
    running = null;
    removeBoard(root);
  });

  it('is claimed, worked and completed: the file stays readable and every request stays under the ceiling', { timeout: 120_000 }, async () => {
    root = tempBoard();
    await makeTeam(root);
    // Compact JSON as a person (or a script) writes it, 100 bytes under the limit: autoteam's own
    // format (2-space JSON, lease, history) is larger, so writing it back whole would pass the limit.
    const head = '{"subject":"Summarise the log","role":"engineer","description":"';
    const tail = '"}\n';
    const file = path.join(root, '.tasks', 'task_1.json');
    const filler = MAX_TASK_FILE_BYTES - 100 - head.length - tail.length;
    fs.writeFileSync(file, `${head}${'The log says: all is well. '.repeat(Math.ceil(filler / 27)).slice(0, filler)}${tail}`);
    expect(fs.statSync(file).size).toBe(MAX_TASK_FILE_BYTES - 100);
    const board = new TaskBoard(root);
    expect(board.get(1).status).toBe('pending');

    const model = new FakeModel([reply(toolUse('bash', { command: 'echo read it' })), reply(toolUse('complete_task', { result: 'summarised' }))]);
    running = startLocalTeammate({ root, name: 'eng', role: 'engineer', model });

    await until(() => {
      const task = readTaskFile(file);
      return task.status === 'completed' ? task : null;
    }, 'task #1 completed and readable', { timeoutMs: 60_000 });
    await running.halt();
    model.assertDone();

    // Every version written was readable: the board never reported the file, and it is under the limit now.
    expect(board.problems()).toEqual([]);
    expect(fs.statSync(file).size).toBeLessThanOrEqual(MAX_TASK_FILE_BYTES);
    const task = board.get(1);
    expect(task).toMatchObject({ status: 'completed', result: 'summarised', owner: 'eng' });
    const trimmed = task.history.find((entry) => entry.event === 'trimmed');
    expect(trimmed?.detail).toMatch(/^cut to stay under 4\.9 MB: description$/);
    expect(task.description).toMatch(/… cut: [\d.]+ KB more; not kept: a task is stored up to 4\.9 MB$/);

    // Each request carried at most 100,000 estimated tokens, the task statement cut with a note.
    for (const call of model.requests) expect(estimateTokens(call.messages) + Math.ceil(call.system.length / 4)).toBeLessThanOrEqual(100_000);
    const statement = model.requests[0]!.messages[2]!.content as string;
    expect(statement.startsWith('Task #1: Summarise the log')).toBe(true);
    expect(statement.match(/… cut: [^\n]*/g)).toEqual([expect.stringMatching(/^… cut: 4\.\d MB more; the whole is in task #1's description on the board$/)]);
  });
});

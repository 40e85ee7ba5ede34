/** Board files broken by hand: each said with its path, and posting goes on. */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TaskBoard } from '../../src/core/board/task-board.js';
import { blobDir, manifestDiff, snapshotWorkspace } from '../../src/core/stages/submission.js';
import { removeBoard, tempBoard } from '../helpers/agent-wait.js';

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) removeBoard(root);
});

function board(): { root: string; tasks: TaskBoard } {
  const root = tempBoard();
  roots.push(root);
  return { root, tasks: new TaskBoard(root) };
}

describe('board files broken by hand', () => {
  it('a folder where a task file should be is a problem naming its path, not a bare EISDIR', async () => {
    const { root, tasks } = board();
    await tasks.create({ subject: 'first' });
    fs.mkdirSync(path.join(root, '.tasks', 'task_9.json'));
    expect(tasks.list().map((task) => task.id)).toEqual([1]);
    expect(tasks.problems()).toEqual([{ path: path.join(root, '.tasks', 'task_9.json'), message: `${path.join(root, '.tasks', 'task_9.json')}: is a folder, not a task file` }]);
  });

  it('a file named like a task that is not one (task_abc.json) is a problem naming it, said once, gone with the file', async () => {
    const root = tempBoard();
    roots.push(root);
    const told: string[] = [];
    // Every read sweeps the folder, as a hand edit is found by a sweep.
    const tasks = new TaskBoard(root, { sweepMs: 0, onProblem: (problem) => told.push(problem.message) });
    await tasks.create({ subject: 'first' });
    const file = path.join(root, '.tasks', 'task_abc.json');
    fs.writeFileSync(file, fs.readFileSync(path.join(root, '.tasks', 'task_1.json')));
    expect(tasks.list().map((task) => task.id)).toEqual([1]);
    const problem = { path: file, message: `${file}: a task's file is named task_<id>.json, its id a number` };
    expect(tasks.problems()).toEqual([problem]);
    tasks.list();
    expect(told).toEqual([problem.message]);
    fs.rmSync(file);
    expect(tasks.problems()).toEqual([]);
    // Only names a task's file could have: other files of the folder are not a problem.
    fs.writeFileSync(path.join(root, '.tasks', 'notes.txt'), 'mine');
    expect(tasks.problems()).toEqual([]);
  });

  it('a task file that holds another id is said as such when read by its id, and never written under that other id', async () => {
    const { root, tasks } = board();
    await tasks.create({ subject: 'first' });
    const file = path.join(root, '.tasks', 'task_1.json');
    fs.writeFileSync(file, JSON.stringify({ ...JSON.parse(fs.readFileSync(file, 'utf8')), id: 7 }));
    const before = fs.readFileSync(file, 'utf8');
    expect(() => tasks.get(1)).toThrow(`${file}: id: 7 does not match the file name`);
    await expect(tasks.update(1, { subject: 'renamed' }, { by: 'lead' })).rejects.toThrow(`${file}: id: 7 does not match the file name`);
    expect(fs.readFileSync(file, 'utf8')).toBe(before);
    expect(fs.existsSync(path.join(root, '.tasks', 'task_7.json'))).toBe(false);
  });

  it('a task counter past the numbers a task can have is read as lost: the next post takes the number after the highest in use', async () => {
    const { root, tasks } = board();
    await tasks.create({ subject: 'first' });
    fs.writeFileSync(path.join(root, '.tasks', '.next-id'), '99999999999999999999');
    expect((await tasks.create({ subject: 'second' })).id).toBe(2);
    expect((await tasks.create({ subject: 'third' })).id).toBe(3);
  });

  it("a re-review's diff says an earlier version's copy is gone, not that the file is binary", () => {
    const { root } = board();
    const workspace = path.join(root, 'workspace', '1');
    fs.mkdirSync(workspace, { recursive: true });
    fs.writeFileSync(path.join(workspace, 'organize.py'), 'print(1)\n');
    fs.writeFileSync(path.join(workspace, 'data.bin'), Buffer.from([1, 0, 2]));
    const before = snapshotWorkspace(root, workspace);
    fs.writeFileSync(path.join(workspace, 'organize.py'), 'print(2)\n');
    fs.writeFileSync(path.join(workspace, 'data.bin'), Buffer.from([3, 0, 4]));
    const after = snapshotWorkspace(root, workspace);
    fs.rmSync(path.join(blobDir(root), before['organize.py']!));
    expect(manifestDiff(root, before, after).split('\n')).toEqual([
      'Binary file data.bin changed',
      `organize.py changed; no diff: the board holds no copy of its earlier version (${before['organize.py']!.slice(0, 12)}), over 1 MB or removed since`,
    ]);
  });
});

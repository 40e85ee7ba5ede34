/**
 * A stage's completion and the task that follows it (`completeThenPost`), on both backends: the
 * follower is posted once and told after the completion; a completion that does not land posts
 * nothing; one racing another poster's createAfter leaves one follower. On PostgreSQL the two are one
 * statement when the store's copy of the task is current, and the locked way, in turn, when it is not.
 */
import { describe, expect, it } from 'vitest';
import type { Task } from '../../src/core/board/schemas.js';
import type { CompletionResult, FollowUp } from '../../src/core/board/task-types.js';
import { boardBackends } from '../helpers/board-backends.js';
import { usePostgres } from '../helpers/postgres.js';

usePostgres();

const { backends, open } = boardBackends('autoteam-follow-');

const followerOf = (done: Task, by: string): FollowUp => ({
  input: { subject: `after #${done.id}`, pipeline: done.pipeline, stage: 'implementation', role: 'engineer', by, artifacts: { from: done.id } },
  after: { pipeline: done.pipeline!, task: done.id },
});

/** Completes `id` as alice's claim 1 on `tasks`, noting each task `follow` is asked of. */
function completeAsAlice(tasks: Awaited<ReturnType<typeof open>>['tasks'], id: number, asked: Task[], told: string[] = []): Promise<CompletionResult> {
  return tasks.completeThenPost(id, { owner: 'alice', token: 1 }, 'analysed', { summary: 'two criteria' }, {
    follow: async (completed) => {
      asked.push(completed);
      return followerOf(completed, 'alice');
    },
    completed: (completed) => told.push(`completed #${completed.id}`),
  });
}

/** Two stores on the board at `location`, and a stage task of `pipeline` claimed by alice through the first. */
async function claimedByAlice(location: string, pipeline: number) {
  const here = await open(location);
  const there = await open(location, { rootDir: here.rootDir });
  const done = await here.tasks.create({ subject: 'stage one', pipeline, stage: 'requirements' });
  await here.tasks.claim(done.id, 'alice');
  await there.tasks.refresh();
  return { here, there, done };
}

describe.each(backends)('completeThenPost on the $name', (backend) => {
  it('completes the task and posts the one that follows it once, told after the completion', async () => {
    const board = await open(await backend.location());
    const done = await board.tasks.create({ subject: 'stage one', pipeline: 4, stage: 'requirements', role: 'analyst' });
    expect(await board.tasks.claim(done.id, 'alice')).toMatchObject({ ok: true });
    const asked: Task[] = [];
    const told: string[] = [];
    const result = await completeAsAlice(board.tasks, done.id, asked, told);
    expect(result).toMatchObject({
      ok: true,
      task: { id: done.id, status: 'completed', result: 'analysed', artifacts: { summary: 'two criteria' } },
      posted: { created: true, task: { subject: `after #${done.id}`, status: 'pending', pipeline: 4, artifacts: { from: done.id } } },
    });
    if (!result.ok) throw new Error(result.reason);
    // Asked once, of the task as completed: on PostgreSQL, in the statement that wrote both.
    expect(asked.map((task) => [task.status, task.result])).toEqual([['completed', 'analysed']]);
    expect(told).toEqual([`completed #${done.id}`]);
    const follower = result.posted!.task;
    expect(board.tasks.get(follower.id)).toEqual(follower);
    await board.sink.flush();
    const logged = (await board.log.read()).filter((event) => event.type === 'task_completed' || event.type === 'task_posted').map((event) => `${event.type} #${event.task}`);
    expect(logged).toEqual([`task_posted #${done.id}`, `task_completed #${done.id}`, `task_posted #${follower.id}`]);
    // Asked again for the same task, the board has it: posted once.
    const again = followerOf(result.task, 'bob');
    expect(await board.tasks.createAfter(again.input, again.after)).toEqual({ task: expect.objectContaining({ id: follower.id }), created: false });
  });

  it('a completion that does not land (the claim is not current) asks for nothing and posts nothing', async () => {
    const board = await open(await backend.location());
    const done = await board.tasks.create({ subject: 'stage one', pipeline: 5, stage: 'requirements' });
    await board.tasks.claim(done.id, 'alice');
    await board.tasks.release(done.id, { owner: 'alice', token: 1 }, 'later');
    const asked: Task[] = [];
    expect(await completeAsAlice(board.tasks, done.id, asked)).toMatchObject({ ok: false, fenced: true, posted: null });
    expect(asked).toEqual([]);
    expect(board.tasks.list().map((task) => task.id)).toEqual([done.id]);
  });

  it("a store whose copy of the task is behind completes it as it is, and posts after it", async () => {
    const { here, there, done } = await claimedByAlice(await backend.location(), 6);
    // Written by the other store: `here` does not read it before it completes.
    await there.tasks.update(done.id, { artifacts: { requirement: 'kept' } }, { by: 'lead', event: 'remarked' });
    const asked: Task[] = [];
    const result = await completeAsAlice(here.tasks, done.id, asked);
    expect(result).toMatchObject({ ok: true, task: { artifacts: { summary: 'two criteria', requirement: 'kept' } }, posted: { created: true } });
    if (!result.ok) throw new Error(result.reason);
    // The last asking is of the task as completed over the other store's write (on PostgreSQL the
    // first, of the stale copy, went with a statement that did not land).
    expect(asked.at(-1)).toMatchObject({ status: 'completed', artifacts: { requirement: 'kept' } });
    expect(result.task.history.map((entry) => entry.event)).toEqual(['created', 'claimed', 'remarked', 'completed']);
    await there.tasks.refresh();
    expect(there.tasks.list().filter((task) => task.artifacts.from === done.id)).toHaveLength(1);
  });

  it('racing another store that posts the same follower, one follower is posted and both get it', async () => {
    const { here, there, done } = await claimedByAlice(await backend.location(), 7);
    const other = followerOf(there.tasks.get(done.id), 'repair');
    const [completed, repaired] = await Promise.all([completeAsAlice(here.tasks, done.id, []), there.tasks.createAfter(other.input, other.after)]);
    expect(completed.ok).toBe(true);
    expect([completed.posted!.created, repaired.created].sort()).toEqual([false, true]);
    expect(completed.posted!.task.id).toBe(repaired.task.id);
    await here.tasks.refresh();
    expect(here.tasks.list().filter((task) => task.artifacts.from === done.id)).toHaveLength(1);
  });

  it('a follow-up that cannot be made leaves the task completed, as on the file board, and its error is the caller\'s', async () => {
    const board = await open(await backend.location());
    const done = await board.tasks.create({ subject: 'stage one', pipeline: 8, stage: 'requirements' });
    await board.tasks.claim(done.id, 'alice');
    const failing = { follow: async () => Promise.reject(new Error('the submission is gone')) };
    await expect(board.tasks.completeThenPost(done.id, { owner: 'alice', token: 1 }, 'analysed', {}, failing)).rejects.toThrow('the submission is gone');
    expect(board.tasks.get(done.id)).toMatchObject({ status: 'completed', result: 'analysed' });
    expect(board.tasks.list()).toHaveLength(1);
  });

  it('a follow-up slow to make (a stage reading a big repository) is still asked once and posted with the completion', async () => {
    const board = await open(await backend.location());
    const done = await board.tasks.create({ subject: 'stage one', pipeline: 9, stage: 'requirements' });
    await board.tasks.claim(done.id, 'alice');
    let asked = 0;
    // Slower than the second a write's stamp may be off the database's clock.
    const slow = { follow: async (completed: Task) => (asked++, await new Promise((resolve) => setTimeout(resolve, 1_200)), followerOf(completed, 'alice')) };
    const result = await board.tasks.completeThenPost(done.id, { owner: 'alice', token: 1 }, 'analysed', {}, slow);
    expect(result).toMatchObject({ ok: true, task: { status: 'completed' }, posted: { created: true } });
    expect(asked).toBe(1);
  });
});


import { afterEach, describe, expect, it } from 'vitest';
import { LoopbackModelServer, taskIdOf } from '../../src/bench/loopback-model.js';
import { TaskSchema, type Task } from '../../src/core/board/schemas.js';
import { taskPrompt } from '../../src/core/stages/handoff.js';

const task = (id: number, owner: string): Task =>
  TaskSchema.parse({ id, subject: `task ${id}`, description: '', status: 'in_progress', owner, role: 'engineer', stage: null, blockedBy: [], blocks: [], pipeline: null, revision: 0, createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z' });

describe('taskIdOf', () => {
  it('reads the number of the last task statement, in a string or in text blocks after the identity block', () => {
    expect(taskIdOf({ messages: [] })).toBeNull();
    expect(taskIdOf({ messages: [{ role: 'user', content: 'hello, no task here' }] })).toBeNull();
    expect(taskIdOf({ messages: [{ role: 'user', content: taskPrompt(task(7, 'e1')) }] })).toBe(7);
    const blocks = [{ type: 'text' as const, text: '<identity>\nYou are e1.\n</identity>' }, { type: 'text' as const, text: taskPrompt(task(12, 'e1')) }];
    expect(taskIdOf({ messages: [{ role: 'user', content: blocks }] })).toBe(12);
    // A conversation kept from one task to the next: the newest statement is the task at hand.
    expect(
      taskIdOf({
        messages: [
          { role: 'user', content: taskPrompt(task(3, 'e1')) },
          { role: 'assistant', content: [{ type: 'text', text: 'Task #3 is done.' }] },
          { role: 'user', content: `${taskPrompt(task(9, 'e1'))}\n\n<progress-summary>\nwrote it\n</progress-summary>` },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'Task #4 was cancelled' }] },
        ],
      }),
    ).toBe(9);
    // Not at a line's start: words about a task, not a statement of one.
    expect(taskIdOf({ messages: [{ role: 'user', content: 'see Task #5' }] })).toBeNull();
  });
});

describe('LoopbackModelServer', () => {
  let server: LoopbackModelServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  const ask = async (agent: string, content: string) => {
    const response = await fetch(`${server!.baseURL(agent)}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'bench', max_tokens: 100, messages: [{ role: 'user', content }] }),
    });
    return { status: response.status, body: (await response.json()) as { type: string; content?: unknown[] } };
  };

  it("reads the board fresh only when its copy does not show the conversation's task under the agent", async () => {
    const asked: Array<{ agent: string; id: number; fresh: boolean }> = [];
    // The copy shows #1 under e1; #2 is e1's only on a fresh read (its claim not yet heard); #3 is nobody's.
    const copy = new Map([[1, task(1, 'e1')]]);
    const fresh = new Map([[1, task(1, 'e1')], [2, task(2, 'e1')]]);
    server = await LoopbackModelServer.start({
      roles: new Map([['e1', 'engineer']]),
      taskOf(agent, id, isFresh) {
        asked.push({ agent, id, fresh: isFresh });
        const held = (isFresh ? fresh : copy).get(id);
        return held?.owner === agent ? held : null;
      },
    });
    for (const [content, expected] of [
      [taskPrompt(task(1, 'e1')), [{ agent: 'e1', id: 1, fresh: false }]],
      [taskPrompt(task(2, 'e1')), [{ agent: 'e1', id: 2, fresh: false }, { agent: 'e1', id: 2, fresh: true }]],
      [taskPrompt(task(3, 'e1')), [{ agent: 'e1', id: 3, fresh: false }, { agent: 'e1', id: 3, fresh: true }]],
      ['a message, no task', []],
    ] as const) {
      asked.length = 0;
      const { status, body } = await ask('e1', content);
      expect(status).toBe(200);
      expect(body.type).toBe('message');
      expect(asked).toEqual(expected);
    }
    expect(server.counts).toEqual({ answered: 4, refused: 0 });
  });

  it('refuses an agent the team does not have, naming it', async () => {
    server = await LoopbackModelServer.start({ roles: new Map([['e1', 'engineer']]), taskOf: () => null });
    const { status } = await ask('nobody', 'Task #1: x');
    expect(status).toBe(404);
    expect(server.errors).toEqual(["no teammate named 'nobody' in the bench's team"]);
  });
});

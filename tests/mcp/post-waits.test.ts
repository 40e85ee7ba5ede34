/**
 * post_requirement beside a lead whose team takes no task of the first stage's role (a lead started
 * with --no-team): the post goes through and says that it waits, and for whom, as the REPL and
 * `autoteam post` say it; not once a teammate of the role runs.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { TeamRegistry } from '../../src/core/board/team-registry.js';
import { boardClient } from '../helpers/board-client.js';
import { boardOf, sessionsOnTempBoards } from '../helpers/repl-session.js';

const made = sessionsOnTempBoards('autoteam-mcp-waits-');

const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
});

describe('post_requirement beside a lead with no teammate of the first stage', () => {
  it('posts, and says the pipeline waits and what would take it; nothing of it once a teammate of the role runs', async () => {
    const root = made.board();
    // A lead with no team, as `autoteam --no-team` starts one.
    const lead = made.session({ rootDir: root, model: { kind: 'offline', reason: 'test' } });
    await lead.start([]);
    const { client, close } = await boardClient(lead, root);
    closers.push(close);
    const post = async (requirement: string) => {
      const result = await client.callTool({ name: 'post_requirement', arguments: { requirement } });
      return { text: (result.content as Array<{ text: string }>)[0]!.text, isError: result.isError ?? false };
    };

    const waiting = await post('Write a Python script that counts the words in a text file.');
    expect(waiting.isError, waiting.text).toBe(false);
    expect(waiting.text.split('\n')).toEqual([
      'Posted pipeline #1: task #1 (requirements) — Analyse: Write a Python script that counts the words in a text file.',
      'Follow it with pipeline_status {"pipeline": 1} or the resource autoteam://task/1.',
      "Note: pipeline #1 waits: task #1 (requirements) is for a teammate of role analyst, and none runs: autoteam worker --role analyst on this board, or /spawn <name> analyst where the lead has a terminal, takes it.",
    ]);
    // A worker of the role in another process (here the test runner's parent, which is alive).
    await new TeamRegistry(root).join('analyst-1', 'analyst', { status: 'idle', pid: process.ppid });
    const taken = await post('Write a Python script that counts the lines in a text file.');
    expect(taken.text).not.toContain('Note:');
    expect(boardOf(lead).tasks.list()).toHaveLength(2);
  });
});

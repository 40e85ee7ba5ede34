/**
 * A pipeline posted from a place that names no remote, on a board where another folder's pipeline
 * branches on one (`repository.remote`), works where the other machines' teammates cannot reach it:
 * the lead says so as it posts (its REPL and web board show the notice; `autoteam post` and MCP's
 * post_requirement print it), never for a board with no pipeline on a remote.
 */
import { describe, expect, it } from 'vitest';
import { fileBoard } from '../../src/core/board/board.js';
import type { Task } from '../../src/core/board/schemas.js';
import { remoteNotice } from '../../src/core/lead/post-work.js';
import type { LeadEvent } from '../../src/core/lead/session.js';
import { sessionsOnTempBoards } from '../helpers/repl-session.js';

const made = sessionsOnTempBoards('autoteam-remote-notice-');
const BARE = '/srv/git/shop.git';
const onRemote = { repo: '/elsewhere/shop', branch: 'autoteam/1-shop', base: 'a'.repeat(40), worktree: '/elsewhere/wt/1', remote: BARE };

describe('a post beside pipelines on a remote', () => {
  it("is said by the lead as it posts, for a folder pipeline; not on a board whose pipelines are all this folder's", async () => {
    const root = made.board();
    const lead = made.session({ rootDir: root, model: { kind: 'offline', reason: 'test' } });
    await lead.start([]);
    const said: string[] = [];
    lead.subscribe((event: LeadEvent) => {
      if (event.type === 'notice' && /remote/.test(event.text)) said.push(event.text);
    });
    await lead.post('Write a Python script that prints the date.');
    expect(said).toEqual([]);
    // Another folder's pipeline, whose branch lives on the remote.
    await fileBoard(root).tasks.create({ subject: 'Analyse: a shop', stage: 'requirements', role: 'analyst', pipeline: 2, artifacts: { git: onRemote } });
    const task = await lead.post('Write a Python script that counts words.');
    expect(task.pipeline).toBe(3);
    expect(said).toEqual([`pipeline #2 of this board branches on the remote ${BARE}, and this folder names no remote: pipeline #3 works in a folder (workspace/<n>); give --remote (or repository.remote in autoteam.config.json) to branch it there`]);
  });

  it('names the branch of a pipeline in this folder\'s repository, every pipeline of a post, and nothing when they branch on a remote too', () => {
    const task = (pipeline: number, git?: object) => ({ id: pipeline, pipeline, artifacts: git ? { git } : {} }) as unknown as Task;
    const board = [task(1, onRemote)];
    const local = { repo: '/here', branch: 'autoteam/2-words', base: 'b'.repeat(40), worktree: '/here/wt/2' };
    expect(remoteNotice(board, [task(2, local)])).toMatch(/: pipeline #2 works on a branch of this folder's repository \(autoteam\/2-words\); give --remote/);
    expect(remoteNotice(board, [task(2), task(3)])).toMatch(/: pipelines #2, #3 work in a folder \(workspace\/<n>\); give --remote/);
    expect(remoteNotice(board, [task(2, { ...local, remote: BARE })])).toBeNull();
    // The posted pipeline's own tasks are not "another" pipeline on the remote.
    expect(remoteNotice([task(2)], [task(2)])).toBeNull();
    expect(remoteNotice(board, [])).toBeNull();
  });
});

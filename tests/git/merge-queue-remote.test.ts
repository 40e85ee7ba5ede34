/**
 * The merge queue on a remote (`repository.remote`), with real git against a real bare repository, a
 * real file board and the real Pipeline; stages are signalled directly (no model). Two folders stand
 * for two machines: the queue drains in A, the revision's engineer works in B and sees the send-back
 * only through the remote.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fileBoard } from '../../src/core/board/board.js';
import type { GitInfo } from '../../src/core/board/artifacts.js';
import type { Task } from '../../src/core/board/schemas.js';
import { checkoutRemoteTask, openRemote, pushSubmission } from '../../src/core/git/remote-branch.js';
import { discardPipeline, mergePipeline } from '../../src/core/lead/branches.js';
import { MergeQueue, recheckLimits } from '../../src/core/lead/merge-queue.js';
import { Pipeline } from '../../src/core/stages/pipeline.js';
import { localGit } from '../../src/core/stages/workspace.js';
import { tempBoard } from '../helpers/pipeline-cli.js';
import { bareRepository, personGit } from '../helpers/person-git.js';
import { stageSignal } from '../helpers/merge-queue-setup.js';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

function folder(prefix: string): string {
  const dir = tempBoard(prefix);
  dirs.push(dir);
  return dir;
}

const git = personGit;

const sha = (text: string | Buffer) => createHash('sha256').update(text).digest('hex');

describe('the merge queue on a remote', () => {
  it('a conflict sends the pipeline back with the markers committed on its remote branch, which the revision names and another folder fetches; the revision then merges by a leased push and its branch goes', async () => {
    const { bare, person } = bareRepository(folder, { 'helper.py': 'VALUE = 1\n' });

    const a = folder('autoteam-machine-a-');
    const b = folder('autoteam-machine-b-');
    const board = fileBoard(a);
    try {
      await board.registry.ensure('crew');
      const pipelines = new Pipeline(board.tasks, board.mailbox, { events: board.sink });
      pipelines.useRepository(await openRemote(a, { remote: bare }));
      const queue = () => new MergeQueue({ board, pipelines, by: 'lead', limits: recheckLimits() });
      const signal = stageSignal(board, pipelines);
      /** The engineer in `where` writes helper.py and pushes; the reviewer in A fetches that commit and approves. */
      const work = async (implementation: Task, where: string, content: string): Promise<Task> => {
        const info = implementation.artifacts.git!;
        const { worktree } = await checkoutRemoteTask(where, info, undefined);
        fs.writeFileSync(path.join(worktree, 'helper.py'), content);
        const head = await pushSubmission(worktree, info, 'submitted\n', 'engineer@crew');
        const submitted = { file: 'helper.py', sha256: sha(content), revision: implementation.revision, files: { 'helper.py': sha(content) } };
        const review = (await signal(implementation, 'submit_for_review', { submitted, git: { ...info, head } }))!;
        await checkoutRemoteTask(a, review.artifacts.git!, undefined);
        await signal(review, 'approve_code', { verdict: 'approved', checks: [], tests: { file: 'helper.py', ok: true, mode: 'smoke', sha256: sha(content) } });
        return board.tasks.get(review.id);
      };

      const first = await pipelines.post('Make the value 2.', { startStage: 'implementation' });
      const pipeline = first.pipeline!;
      const approved = (await work(first, b, 'VALUE = 2\n')).artifacts.git!;
      expect(approved.baseBranch).toBe('main');
      // `merge <id>` is a local merge into the person's branch: on a remote it points at the queue.
      await expect(mergePipeline(board.tasks, pipeline, 'lead')).rejects.toThrow(/lives on the remote .*: the merge queue merges it there \(autoteam merge --queue, or \/merge all\)/);

      // The person moves main on the remote, changing the same line.
      fs.writeFileSync(path.join(person, 'helper.py'), 'VALUE = 3\n');
      git(person, 'commit', '-q', '-am', 'three');
      git(person, 'push', '-q', 'origin', 'HEAD:main');
      const tip = git(bare, 'rev-parse', 'main');

      const [line] = await queue().drain();
      expect(line).toMatch(new RegExp(`^pipeline #${pipeline}: not merged — conflict with main in helper\\.py; sent back to implementation as revision 1 \\(#\\d+\\); the approved commit was [0-9a-f]{12}$`));
      expect(git(bare, 'rev-parse', 'main')).toBe(tip);
      const revision = board.tasks.list().filter((task) => task.pipeline === pipeline).at(-1)!;
      expect(revision).toMatchObject({ stage: 'implementation', revision: 1, status: 'pending' });
      const info: GitInfo = revision.artifacts.git!;
      // The re-applied change is a commit on the base's new tip, pushed to the branch, named as the revision's head.
      expect(info.commit).toBeUndefined();
      expect(info.base).toBe(tip);
      expect(info.head).toBe(git(bare, 'rev-parse', approved.branch));
      expect(git(bare, 'rev-parse', `${info.head}^`)).toBe(tip);
      const marked = git(bare, 'show', `${info.head}:helper.py`);
      expect(marked).toMatch(/^<<<<<<< [^\n]*\nVALUE = 3\n=======\nVALUE = 2\n>>>>>>> /);
      // The engineer's folder, on another machine, gets it from the remote; the send-back's snapshot from the board.
      const { worktree } = await checkoutRemoteTask(b, info, undefined);
      const there = fs.readFileSync(path.join(worktree, 'helper.py'));
      expect(there.toString()).toBe(`${marked}\n`);
      expect(revision.artifacts.submitted?.files).toEqual({ 'helper.py': sha(there) });
      expect((await board.blobs.get(sha(there)))?.toString()).toBe(there.toString());

      const fixed = (await work(revision, b, 'VALUE = 5\n')).artifacts.git!;
      expect(git(bare, 'rev-parse', `${fixed.commit}^`)).toBe(tip);
      const [merged] = await queue().drain();
      expect(merged).toBe(`pipeline #${pipeline}: ${approved.branch} merged into main on ${bare} (fast-forward to ${fixed.commit!.slice(0, 12)}); its branch on the remote and this folder's worktree of it are removed`);
      expect(git(bare, 'rev-parse', 'main')).toBe(fixed.commit);
      expect(git(bare, 'show', 'main:helper.py')).toBe('VALUE = 5');
      expect(git(bare, 'branch', '--list', approved.branch)).toBe('');
      expect(fs.existsSync(localGit(a, fixed).worktree)).toBe(false);
    } finally {
      await board.close();
    }
  });

  it('discard deletes the pipeline branch on the remote as well as this folder\'s worktree', async () => {
    const { bare, person } = bareRepository(folder, { 'helper.py': 'VALUE = 1\n' });
    const a = folder('autoteam-machine-a-');
    const board = fileBoard(a);
    try {
      await board.registry.ensure('crew');
      const pipelines = new Pipeline(board.tasks, board.mailbox, { events: board.sink });
      pipelines.useRepository(await openRemote(a, { remote: bare }));
      const first = await pipelines.post('Make the value 2.', { startStage: 'implementation' });
      const info = first.artifacts.git!;
      expect(git(bare, 'branch', '--list', info.branch)).toContain(info.branch);
      await pipelines.cancel(first.pipeline!, 'lead');
      const said = await discardPipeline(board.tasks, first.pipeline!, 'lead');
      expect(said).toContain(`branch ${info.branch} on ${info.remote}`);
      expect(git(bare, 'branch', '--list', info.branch)).toBe('');
      expect(fs.existsSync(localGit(a, info).worktree)).toBe(false);
      expect(git(bare, 'rev-parse', 'main')).toBe(git(person, 'rev-parse', 'HEAD'));
    } finally {
      await board.close();
    }
  });
});

/**
 * The merge queue's test bench: a real repository holding a real file board and Pipeline, whose
 * pipelines are made by signalling their stages directly (no model).
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach } from 'vitest';
import { fileBoard } from '../../src/core/board/board.js';
import type { Board } from '../../src/core/board/board-types.js';
import type { Check } from '../../src/core/board/artifacts.js';
import type { Task } from '../../src/core/board/schemas.js';
import { findRepository, prepareRepository } from '../../src/core/git/worktree.js';
import { MergeQueue, recheckLimits } from '../../src/core/lead/merge-queue.js';
import { Pipeline, type StageSignal } from '../../src/core/stages/pipeline.js';
import { personGit } from './person-git.js';

export const roots: string[] = [];
const boards: Board[] = [];
afterEach(async () => {
  for (const board of boards.splice(0)) await board.close();
  for (const root of roots.splice(0)) fs.rmSync(root, { recursive: true, force: true });
});

/** git as the person runs it. */
export const git = personGit;

export function commitFile(repo: string, file: string, content: string, message: string): string {
  fs.writeFileSync(path.join(repo, file), content);
  git(repo, 'add', file);
  git(repo, 'commit', '-q', '-m', message);
  return git(repo, 'rev-parse', 'HEAD');
}

export const sha = (text: string) => createHash('sha256').update(text).digest('hex');

/** A repository (main: helper.py with VALUE = 1) holding a file board, and a Pipeline on it. */
/** Claims `task` as its role and ends it with `tool` (a stage's signal) carrying `artifacts`: the next task, if any. */
export function stageSignal(board: Board, pipelines: Pipeline) {
  return async (task: Task, tool: string, artifacts: StageSignal['artifacts']) => {
    const claim = await board.tasks.claim(task.id, task.role!);
    if (!claim.ok) throw new Error(claim.reason);
    const result = await pipelines.advance(claim.task, { owner: task.role!, token: claim.task.claims }, { tool, artifacts, result: tool });
    if (!result.ok) throw new Error(result.reason);
    return result.next;
  };
}

export async function setup() {
  const repo = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-queue-')));
  roots.push(repo);
  git(repo, 'init', '-q', '-b', 'main');
  commitFile(repo, 'helper.py', 'VALUE = 1\n', 'helper');
  const board = fileBoard(repo);
  boards.push(board);
  await board.registry.ensure('crew');
  const found = await findRepository(repo);
  if (!found.repo) throw new Error(found.reason);
  await prepareRepository(found.repo, repo);
  const pipelines = new Pipeline(board.tasks, board.mailbox, { events: board.sink });
  pipelines.useRepository(found.repo);
  const queue = () => new MergeQueue({ board, pipelines, by: 'lead', limits: recheckLimits() });
  const signal = stageSignal(board, pipelines);
  /** An implementation task's engineer writes `file` and submits; the reviewer approves with `check` passing. */
  const work = async (implementation: Task, file: string, content: string, check: string): Promise<Task> => {
    const worktree = implementation.artifacts.git!.worktree;
    fs.writeFileSync(path.join(worktree, file), content);
    const submitted = { file, sha256: sha(content), revision: implementation.revision, files: { [file]: sha(content) } };
    const review = (await signal(implementation, 'submit_for_review', { submitted }))!;
    const chk: Check = { id: 'CHK1', language: 'python', code: check, ok: true, exitCode: 0, output: 'ok', sha256: sha(content), ms: 1 };
    await signal(review, 'approve_code', { verdict: 'approved', checks: [chk], tests: { file, ok: true, mode: 'smoke', sha256: sha(content) } });
    return board.tasks.get(review.id);
  };
  const post = async (file: string, content: string, check: string) => {
    const first = await pipelines.post(`Add ${file}.`, { startStage: 'implementation' });
    await work(first, file, content, check);
    return first.pipeline!;
  };
  const steps = async (pipeline: number) => (await board.sink.flush(), await board.log.read({ pipeline, types: ['merge_step'] })).map((event) => (event.type === 'merge_step' ? event.step : ''));
  return { repo, board, pipelines, queue, post, work, steps };
}


/**
 * The pipeline decides; its effects act. Here the effects are a fake that records every call and
 * answers from data, so the engine's decisions (what to read, diff and commit, and when) are seen
 * without a repository or a workspace.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Change, GitInfo } from '../../src/core/board/artifacts.js';
import { Mailbox } from '../../src/core/board/mailbox.js';
import type { Task } from '../../src/core/board/schemas.js';
import { TaskBoard } from '../../src/core/board/task-board.js';
import type { PipelineEffects } from '../../src/core/stages/effects.js';
import { Pipeline, type StageSignal } from '../../src/core/stages/pipeline.js';
import { pipelineStatus } from '../../src/core/stages/pipeline-status.js';

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) fs.rmSync(root, { recursive: true, force: true });
});

const GIT: GitInfo = { repo: '/repo', branch: 'autoteam/1-count-words', base: 'b'.repeat(40), worktree: '/repo/.autoteam/worktrees/1' };
const CHANGE: Change = { base: GIT.base, files: [{ path: 'wc.py', status: 'A' }], diff: '+print(1)\n' };

/** Effects that answer from data and record what they were asked. */
class FakeEffects implements PipelineEffects {
  readonly calls: Array<[string, ...unknown[]]> = [];
  commitResult: string | null = 'c'.repeat(40);

  async createWorkspace(repository: { top: string }, pipeline: number, requirement: string): Promise<GitInfo> {
    this.calls.push(['createWorkspace', repository.top, pipeline, requirement]);
    return GIT;
  }
  readSubmission(workspace: string, file: string): string {
    this.calls.push(['readSubmission', workspace, file]);
    return `# ${file} as submitted\n`;
  }
  async change(git: GitInfo): Promise<Change> {
    this.calls.push(['change', git.worktree]);
    return CHANGE;
  }
  diff(before: Record<string, string>, after: Record<string, string>): string {
    this.calls.push(['diff', before, after]);
    return '-old\n+new\n';
  }
  async commit(git: GitInfo, message: string, author: string): Promise<string | null> {
    this.calls.push(['commit', git.worktree, message, author]);
    return this.commitResult;
  }
}

async function setup() {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-effects-'));
  roots.push(root);
  const board = new TaskBoard(root);
  const mailbox = new Mailbox(root);
  await mailbox.registry.ensure('crew');
  const effects = new FakeEffects();
  const pipeline = new Pipeline(board, mailbox, { effects });
  pipeline.useRepository({ top: '/repo', head: GIT.base, branch: 'main' } as Parameters<Pipeline['useRepository']>[0]);
  /** Claims `task` as its role and signals. */
  const signal = async (task: Task, tool: string, artifacts: StageSignal['artifacts'] = {}) => {
    const claim = await board.claim(task.id, task.role!);
    if (!claim.ok) throw new Error(claim.reason);
    return pipeline.advance(claim.task, { owner: task.role!, token: claim.task.claims }, { tool, artifacts, result: tool });
  };
  return { board, pipeline, effects, signal };
}

const submitted = (revision: number, content: string) => ({ submitted: { file: 'wc.py', sha256: content.repeat(64), revision, files: { 'wc.py': content.repeat(64) } } });

describe('Pipeline with fake effects', () => {
  it('makes the worktree at post, reads the submission and the change for a review, diffs a re-review, and commits the approval', async () => {
    const { pipeline, effects, signal } = await setup();
    const first = await pipeline.post('Count words.');
    expect(effects.calls).toEqual([['createWorkspace', '/repo', first.pipeline, 'Count words.']]);
    expect(first.artifacts.git).toEqual(GIT);

    const implementation = (await signal(first, 'complete_requirements_analysis', { summary: 's' })).next!;
    expect(implementation.artifacts.git).toEqual(GIT);
    const review = (await signal(implementation, 'submit_for_review', submitted(0, 'a'))).next!;
    expect(effects.calls.slice(1)).toEqual([
      ['readSubmission', GIT.worktree, 'wc.py'],
      ['change', GIT.worktree],
    ]);
    expect(review.handoff).toContain('# wc.py as submitted');
    expect(review.artifacts.change).toEqual(CHANGE);
    expect(review.subject).toBe('Review wc.py (revision 0)');

    const revision = (await signal(review, 'request_revision', { verdict: 'changes requested', issues: [{ text: 'no docstring', severity: 'major' }] })).next!;
    expect(revision).toMatchObject({ stage: 'implementation', revision: 1, artifacts: expect.objectContaining({ issues: [{ text: 'no docstring', severity: 'major' }] }) });
    effects.calls.length = 0;
    const rereview = (await signal(revision, 'submit_for_review', submitted(1, 'b'))).next!;
    expect(effects.calls).toEqual([
      ['readSubmission', GIT.worktree, 'wc.py'],
      ['change', GIT.worktree],
      ['diff', { 'wc.py': 'a'.repeat(64) }, { 'wc.py': 'b'.repeat(64) }],
    ]);
    expect(rereview.artifacts).toMatchObject({ previousIssues: [{ text: 'no docstring', severity: 'major' }], diff: '-old\n+new\n' });

    effects.calls.length = 0;
    const approved = await signal(rereview, 'approve_code', { verdict: 'approved', comment: 'good', criteriaVerdicts: [] });
    expect(approved.status).toBe('approved');
    expect(effects.calls).toEqual([['commit', GIT.worktree, expect.stringMatching(/^Count words\.\n\n[\s\S]*Review: good/), 'reviewer@crew']]);
    expect(pipeline.state(first.pipeline!).tasks.at(-1)!.artifacts.git?.commit).toBe('c'.repeat(40));
  });

  it("commits an approval of a requirement too long for a subject with the subject cut and the whole requirement in the body", async () => {
    const { pipeline, effects, signal } = await setup();
    const requirement = 'Write a Python script that sorts the files in my Downloads folder into folders by file type.';
    const first = await pipeline.post(requirement);
    const implementation = (await signal(first, 'complete_requirements_analysis', { summary: 's' })).next!;
    const review = (await signal(implementation, 'submit_for_review', submitted(0, 'a'))).next!;
    effects.calls.length = 0;
    await signal(review, 'approve_code', { verdict: 'approved', comment: 'good', criteriaVerdicts: [] });
    const message = effects.calls[0]![2] as string;
    expect(message.split('\n')[0]).toBe(`${requirement.slice(0, 71)}…`);
    expect(message).toContain(`\n\nRequirement:\n${requirement}\n\n`);
  });

  it('approves with nothing to commit when the worktree has no change against its base: the commit is the base', async () => {
    const { pipeline, effects, signal } = await setup();
    effects.commitResult = null;
    const first = await pipeline.post('Count words.', { startStage: 'review' });
    const result = await signal(first, 'approve_code', { verdict: 'approved', comment: 'ok' });
    expect(result).toMatchObject({ ok: true, status: 'approved' });
    const approval = pipeline.state(first.pipeline!).tasks.at(-1)!;
    expect(approval.artifacts.git?.commit).toBe(GIT.base);
    expect(approval.result).toMatch(new RegExp(` — nothing to commit: the base ${GIT.base.slice(0, 12)} already holds the reviewed files$`));
  });
});

describe('retry keeps what the stage says', () => {
  it("keeps the pipeline's data and the stage's keep-list, and drops the failed attempt's verdicts and reports", async () => {
    const { board, pipeline, signal } = await setup();
    const first = await pipeline.post('Count words.', { startStage: 'implementation' });
    const review = (await signal(first, 'submit_for_review', submitted(0, 'a'))).next!;
    const claim = await board.claim(review.id, 'reviewer');
    if (!claim.ok) throw new Error(claim.reason);
    const own = { lint: { file: 'wc.py', ok: true }, tests: { file: 'wc.py', ok: false }, verdict: 'changes requested' as const, comment: 'x', issues: [{ text: 'i', severity: 'major' as const }], signal: 'request_revision', custom: 1 };
    await board.fail(review.id, { owner: 'reviewer', token: claim.task.claims }, 'broke', own);
    const retried = await pipeline.retry(first.pipeline!, 'lead');
    expect(Object.keys(retried.artifacts).sort()).toEqual(['change', 'criteria', 'from', 'git', 'requirement', 'requirements', 'retryOf', 'submitted']);
    expect(retried.artifacts).toMatchObject({ retryOf: review.id, from: first.id, change: CHANGE, submitted: submitted(0, 'a').submitted });
  });

  it('keeps the issues a failed revision was sent back with', async () => {
    const { board, pipeline, signal } = await setup();
    const first = await pipeline.post('Count words.', { startStage: 'review' });
    const revision = (await signal(first, 'request_revision', { verdict: 'changes requested', issues: [{ text: 'i', severity: 'blocker' }] })).next!;
    const claim = await board.claim(revision.id, 'engineer');
    if (!claim.ok) throw new Error(claim.reason);
    await board.fail(revision.id, { owner: 'engineer', token: claim.task.claims }, 'gave up');
    const retried = await pipeline.retry(first.pipeline!, 'lead');
    expect(retried).toMatchObject({ stage: 'implementation', revision: 1, artifacts: expect.objectContaining({ issues: [{ text: 'i', severity: 'blocker' }] }) });
  });
});

describe('a board written before signals and severities', () => {
  it('reads: plain-string issues are major, and an approving verdict with no signal approved the pipeline', async () => {
    const { board, pipeline } = await setup();
    const first = await pipeline.post('Count words.', { startStage: 'review' });
    const file = path.join(board.rootDir, '.tasks', `task_${first.id}.json`);
    const stored = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown> & { artifacts: Record<string, unknown> };
    // As the first versions wrote it: done, an approving verdict, issues as strings, no `signal` or `final`.
    const old = { ...stored, status: 'completed', owner: 'reviewer', artifacts: { ...stored.artifacts, verdict: 'approved', issues: ['a nit'], comment: 'fine' } };
    fs.writeFileSync(file, JSON.stringify(old));
    const reread = new TaskBoard(board.rootDir);
    await reread.refresh();
    const task = reread.get(first.id);
    expect(task.artifacts.issues).toEqual([{ text: 'a nit', severity: 'major' }]);
    expect(pipelineStatus([task])).toBe('approved');
    expect(await new Pipeline(reread, new Mailbox(board.rootDir)).repair()).toBe(0);
  });
});

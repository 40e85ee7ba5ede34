/**
 * The person's control over a pipeline: cancel stops its open tasks (and the teammate on one), retry
 * restarts a failed or cancelled one from the stage that ended it, with what the board already holds.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { fileBoard } from '../../src/core/board/board.js';
import { Mailbox } from '../../src/core/board/mailbox.js';
import { TaskBoard } from '../../src/core/board/task-board.js';
import { TeamRegistry } from '../../src/core/board/team-registry.js';
import { type LeadEvent, LeadSession } from '../../src/core/lead/session.js';
import { Pipeline } from '../../src/core/stages/pipeline.js';
import { runLine } from '../../src/frontend/commands.js';
import { HANG_MS, until } from '../helpers/agent-wait.js';
import { describeRun, runCli } from '../helpers/pipeline-cli.js';

const roots: string[] = [];
const sessions: LeadSession[] = [];
afterEach(async () => {
  for (const session of sessions.splice(0)) await session.close(1_000).catch(() => undefined);
  for (const root of roots.splice(0)) fs.rmSync(root, { recursive: true, force: true });
});

function board(): string {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-cancel-')));
  roots.push(root);
  return root;
}

/** A fresh file board with a team and its pipelines, no lead. */
async function pipelineBoard(): Promise<{ root: string; tasks: TaskBoard; pipeline: Pipeline }> {
  const root = board();
  const tasks = new TaskBoard(root);
  const mailbox = new Mailbox(root);
  await mailbox.registry.ensure('test');
  return { root, tasks, pipeline: new Pipeline(tasks, mailbox) };
}

describe('cancel and retry', () => {
  it('cancel stops the teammate waiting on the task; retry resumes from the same stage with the answers kept', async () => {
    const root = board();
    const session = new LeadSession({ rootDir: root, model: { kind: 'offline', reason: 'test' }, settings: { pollMs: 50, leaseMs: 1_500 } });
    sessions.push(session);
    const questions: string[] = [];
    session.on('event', (event: LeadEvent) => {
      if (event.type === 'question') questions.push(event.question.questionId);
    });
    await session.start();
    const first = await session.post('Write a Python script that organizes my Downloads folder by file type.');
    await until(() => questions.length === 1, 'the first question');
    await session.answer('Pictures and Misc only');
    await until(() => questions.length === 2, 'the second question');
    const registry = new TeamRegistry(root);
    await until(() => registry.get('analyst')?.status === 'waiting', 'the analyst waits for the answer');

    const cancelled = await session.cancel(first.pipeline!);
    expect(cancelled).toEqual([first.id]);
    expect(session.task(first.id)!).toMatchObject({ status: 'cancelled', result: 'cancelled by lead', lease: null });
    expect(session.stateOf(first.pipeline!).status).toBe('cancelled');
    // The analyst was told, and stopped waiting: its claim is gone.
    await until(() => registry.get('analyst')?.status === 'idle', 'the analyst stopped');
    // A second cancel has nothing to do, and says so (as a second merge or discard does), rather than failing.
    expect(await session.cancel(first.pipeline!)).toEqual([]);
    const said: string[] = [];
    await runLine(`/cancel ${first.pipeline}`, { session, print: (text) => said.push(text), askLead: (text) => session.ask(text) });
    expect(said).toEqual([`pipeline #${first.pipeline} was already cancelled: nothing to do`]);

    session.setAutoAnswer(true);
    const retried = await session.retry(first.pipeline!);
    expect(retried).toMatchObject({ stage: 'requirements', pipeline: first.pipeline, status: 'pending', artifacts: expect.objectContaining({ retryOf: first.id }) });
    expect(retried.artifacts.qa).toEqual([expect.objectContaining({ answer: 'Pictures and Misc only' })]);
    expect(session.task(first.id)!.artifacts.retriedBy).toBe(retried.id);
    const state = await session.waitForPipeline(first.pipeline!, AbortSignal.timeout(HANG_MS));
    expect(state.status).toBe('approved');
    // The first answer came from the board: the person (here the simulated user) was asked once more only.
    const analysis = session.task(retried.id)!;
    expect(analysis.artifacts.qa?.map((entry) => entry.answer)[0]).toBe('Pictures and Misc only');
    expect(analysis.artifacts.criteria?.[0]?.criterion).toMatch(/Pictures \(.*\); Misc \(anything else\)$/);
  });

  it('retry is refused for an active or approved pipeline; both exist as subcommands with exit 2 on misuse', async () => {
    const { root, tasks, pipeline } = await pipelineBoard();
    const first = await pipeline.post('Write a greeting program.', { startStage: 'implementation' });
    await expect(pipeline.retry(1, 'lead')).rejects.toThrow('pipeline #1 is active; only a failed or cancelled pipeline can be retried');
    const early = await runCli(['retry', '1', '--dir', root], { cwd: root });
    expect(early.code, describeRun(early)).toBe(2);
    expect(early.stderr.trim()).toBe('autoteam: pipeline #1 is active; only a failed or cancelled pipeline can be retried');
    const hex = await runCli(['cancel', '0x1', '--dir', root], { cwd: root });
    expect(hex.code).toBe(2);
    expect(hex.stderr.trim()).toBe("autoteam: a pipeline id is a positive whole number, got '0x1'");
    expect(pipeline.state(1).status).toBe('active');
    const unknown = await runCli(['cancel', '7', '--dir', root], { cwd: root });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr.trim()).toBe('autoteam: there is no pipeline #7');

    const claim = await tasks.claim(first.id, 'engineer');
    if (!claim.ok) throw new Error(claim.reason);
    await pipeline.fail(claim.task, { owner: 'engineer', token: claim.task.claims }, 'max turns (30) reached');
    expect(pipeline.state(1).status).toBe('failed');
    const retry = await runCli(['retry', '#1', '--dir', root], { cwd: root });
    expect(retry.code, describeRun(retry)).toBe(0);
    expect(retry.stdout.trim().split('\n')).toEqual([
      'pipeline #1 retried: task #2 (implementation) — Implement: Write a greeting program.',
      // The pipeline goes on from implementation: it needs an engineer and a reviewer.
      'no lead runs on this board: the tasks wait for one (autoteam; autoteam --auto < /dev/null works them and ends) or for workers (autoteam worker --role engineer, and one with --role reviewer)',
    ]);
    expect(pipeline.state(1).status).toBe('active');
    const cancel = await runCli(['cancel', '1', '--dir', root], { cwd: root });
    expect(cancel.stdout.trim()).toBe('pipeline #1 cancelled: #2');
    const list = await runCli(['tasks', '--dir', root], { cwd: root });
    expect(list.stdout).toMatch(/\[!\] #1: .*\n\[-\] #2: .*\npipeline #1 cancelled · 0 model calls · 0 tokens — cancelled by lead/);
    // What the two commands did is in the board's log, as the lead's own cancel and retry are (a REPL shows them).
    const logged = (await fileBoard(root).log.read({ pipeline: 1 })).map((event) => (event.type === 'pipeline_status' ? `status ${event.status}` : event.type));
    expect(logged).toEqual(expect.arrayContaining(['task_retried', 'status active', 'task_cancelled', 'status cancelled']));
    expect(logged.indexOf('task_retried')).toBeLessThan(logged.lastIndexOf('status cancelled'));
  });

  it("names the task files it cannot read when a pipeline's tasks are all among them", async () => {
    const { root, tasks, pipeline } = await pipelineBoard();
    await pipeline.post('Write a greeting program.', { startStage: 'implementation' });
    // A person edits the file by hand into something that is not JSON.
    fs.writeFileSync(path.join(root, '.tasks', 'task_1.json'), '{"subject": "bro');
    await expect(pipeline.cancel(1, 'lead')).rejects.toThrow(/^there is no pipeline #1 that can be read \(the board skips .*task_1\.json: not valid JSON/);
    await expect(pipeline.retry(1, 'lead')).rejects.toThrow(/^there is no pipeline #1 that can be read \(the board skips .*task_1\.json/);
    // A board whose files all read says no more than that.
    await expect(pipeline.cancel(7, 'lead')).rejects.toThrow(/^there is no pipeline #7 that can be read/);
    fs.writeFileSync(path.join(root, '.tasks', 'task_1.json'), JSON.stringify({ subject: 'fixed by hand' }));
    // A hand edit is read at the board's next sweep of its files.
    await until(() => tasks.problems().length === 0, 'the mended file read');
    await expect(pipeline.cancel(7, 'lead')).rejects.toThrow(/^there is no pipeline #7$/);
  });
});

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadTeammateSettings } from '../../src/core/agent/settings.js';
import { Mailbox } from '../../src/core/board/mailbox.js';
import { TaskBoard } from '../../src/core/board/task-board.js';
import { ConfigError } from '../../src/core/errors.js';
import { claimTaskTool } from '../../src/core/tools/claim-task.js';
import { submitForReviewTool } from '../../src/core/tools/submit-for-review.js';
import { makeToolContext, type TestContext } from '../tools/context.js';

const SECRET = 'sk-ant-hardening-test-0123456789';
let env: string | undefined;
const contexts: TestContext[] = [];
const roots: string[] = [];

afterEach(() => {
  if (env === undefined) delete process.env.ANTHROPIC_API_KEY;
  else process.env.ANTHROPIC_API_KEY = env;
  for (const c of contexts.splice(0)) c.cleanup();
  for (const root of roots.splice(0)) fs.rmSync(root, { recursive: true, force: true });
});

function tempRoot(): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-hardening-'));
  roots.push(root);
  return root;
}

describe('hardening', () => {
  it('submit_for_review refuses a symlink that leaves the workspace (e.g. to the board .env)', async () => {
    const c = makeToolContext();
    contexts.push(c);
    fs.writeFileSync(path.join(c.root, '.env'), `ANTHROPIC_API_KEY=${SECRET}\n`);
    fs.symlinkSync(path.join(c.root, '.env'), path.join(c.workspace, 'main.py'));
    const outcome = await submitForReviewTool.run({ file: 'main.py' }, c.ctx);
    expect(outcome.isError).toBe(true);
    expect(outcome.signal).toBeUndefined();
    expect(outcome.content).not.toContain(SECRET);
  });

  it('never writes a secret from the environment into a task file or an inbox', async () => {
    env = process.env.ANTHROPIC_API_KEY;
    process.env.ANTHROPIC_API_KEY = SECRET;
    const root = tempRoot();
    const board = new TaskBoard(root);
    const mailbox = new Mailbox(root);
    await mailbox.registry.ensure('t');
    const task = await board.create({ subject: `leak ${SECRET}` });
    const claim = await board.claim(task.id, 'eng');
    if (!claim.ok) throw new Error(claim.reason);
    await board.complete(task.id, { owner: 'eng', token: claim.task.claims }, `the key is ${SECRET}`, { note: SECRET });
    await mailbox.send('eng', 'lead', `psst ${SECRET}`);
    const onDisk = [
      fs.readFileSync(board.taskPath(task.id), 'utf8'),
      fs.readFileSync(mailbox.inboxPath('lead'), 'utf8'),
    ].join('\n');
    expect(onDisk).not.toContain(SECRET);
    expect(onDisk).toContain('[redacted]');
  });

  it('claim_task hands the claimed task to the runtime instead of working it in the message loop', async () => {
    const c = makeToolContext();
    contexts.push(c);
    const task = await c.ctx.board.create({ subject: 'Run `true`', role: 'engineer' });
    const outcome = await claimTaskTool.run({ task_id: task.id }, c.ctx);
    expect(outcome.isError).toBeUndefined();
    expect(outcome.signal).toMatchObject({ kind: 'claimed', task: { id: task.id, owner: 'engineer', status: 'in_progress' } });
  });

  it('an in-progress task with no lease can be taken over (nothing would ever renew it)', async () => {
    const board = new TaskBoard(tempRoot());
    const task = await board.create({ subject: 'orphan' });
    await board.claim(task.id, 'ghost');
    const file = board.taskPath(task.id);
    const raw = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
    fs.writeFileSync(file, JSON.stringify({ ...raw, lease: null }, null, 2));
    expect(board.scanUnclaimed().map((t) => t.id)).toEqual([task.id]);
    const taken = await board.claim(task.id, 'eng');
    expect(taken).toMatchObject({ ok: true, task: { owner: 'eng', claims: 2 } });
  });

  it('rejects settings that would stall or fail every task, naming the setting', () => {
    expect(() => loadTeammateSettings({ MAX_TURNS: '0' })).toThrow(ConfigError);
    expect(() => loadTeammateSettings({ MAX_TURNS: '0' })).toThrow(/MAX_TURNS/);
    expect(() => loadTeammateSettings({}, { pollInterval: '0' })).toThrow(/--poll-interval/);
    expect(loadTeammateSettings({ POLL_INTERVAL: '250ms', MAX_TURNS: '5' })).toMatchObject({ pollMs: 250, maxTurns: 5 });
  });
});

describe('general tasks', () => {
  it('a teammate marks a task it could not do as failed, not completed', async () => {
    const { TeamRegistry } = await import('../../src/core/board/team-registry.js');
    const { Teammate } = await import('../../src/core/agent/teammate.js');
    const { Wake } = await import('../../src/core/agent/wake.js');
    const { ScriptedModel } = await import('../../src/core/model/scripted/scripted-model.js');
    const root = tempRoot();
    await new TeamRegistry(root).ensure('t');
    const board = new TaskBoard(root);
    const bad = await board.create({ subject: 'Run a missing script', description: 'Run `python3 nope.py` in the workspace.' });
    const good = await board.create({ subject: 'Say hi', description: 'Run `echo hi; seq 1 50`.' });
    // What the offline model cannot really do fails with a line naming both ways to a real model.
    const prose = await board.create({ subject: 'Write tests' });
    const stop = new AbortController();
    const mate = new Teammate({ name: 'eng', role: 'engineer', rootDir: root, model: new ScriptedModel(), wake: new Wake(), signal: stop.signal, settings: { idleTimeoutMs: 200, pollMs: 50 } });
    await mate.run();
    expect(board.get(bad.id)).toMatchObject({ status: 'failed', result: expect.stringMatching(/nope\.py.*exit 2/) });
    // The result is the command's output, its first 40 lines and a count of the rest.
    expect(board.get(good.id)).toMatchObject({ status: 'completed', result: expect.stringMatching(/^`echo hi; seq 1 50`: exit 0.*\nstdout:\nhi\n1\n2\n[\s\S]*\n3[0-9]\n… \(\d+ more lines\)$/) });
    expect(board.get(prose.id)).toMatchObject({ status: 'failed', result: expect.stringMatching(/^the offline model cannot do this task .*ANTHROPIC_API_KEY, or OPENAI_API_KEY \/ OPENAI_BASE_URL/) });
    expect(fs.existsSync(path.join(root, 'workspace', 'general', `task-${prose.id}.md`))).toBe(false);
  });
});

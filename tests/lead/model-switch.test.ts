import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Task } from '../../src/core/board/schemas.js';
import { LeadSession } from '../../src/core/lead/session.js';
import { type CommandIO, runLine } from '../../src/frontend/commands.js';
import { FAKE_MODEL_PATH, type FakeModelOptions } from '../helpers/fake-model.js';
import { boardOf, tempBoard, waitUntil } from '../helpers/repl-session.js';

/** /model: a role's next tasks, and its teammates started later, run on the model the person chose. */

const sessions: LeadSession[] = [];
const roots: string[] = [];

afterEach(async () => {
  for (const session of sessions.splice(0)) await session.close(1_000).catch(() => undefined);
  for (const root of roots.splice(0)) fs.rmSync(root, { recursive: true, force: true });
});

const fake = (options: FakeModelOptions) => ({ kind: 'module' as const, path: FAKE_MODEL_PATH, options });
const calls = (file: string) => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).length : 0);

async function done(session: LeadSession, id: number): Promise<Task> {
  return waitUntil(() => {
    const task = session.task(id)!;
    return task.status === 'completed' || task.status === 'failed' ? task : null;
  }, `task #${id} to end`, 30_000);
}

describe('/model', () => {
  it("works a role's next task on the new model, and a teammate started later starts on it", async () => {
    const root = tempBoard('autoteam-model-');
    roots.push(root);
    const first = path.join(root, 'first.jsonl');
    const second = path.join(root, 'second.jsonl');
    const session = new LeadSession({
      rootDir: root,
      model: fake({ script: 'steps', steps: ['first model: done'], recordTo: first }),
      settings: { pollMs: 100 },
    });
    sessions.push(session);
    const lines: string[] = [];
    session.on('event', (event) => {
      if (event.type === 'teammate' && event.event.type === 'activity') lines.push(`[${event.event.name}] ${event.event.text}`);
    });
    await session.start([{ name: 'engineer', role: 'engineer' }]);

    const one = await boardOf(session).tasks.create({ subject: 'Say something', role: 'engineer' });
    expect((await done(session, one.id)).result).toBe('first model: done');

    session.setModel('engineer', fake({ script: 'steps', steps: ['second model: done'], recordTo: second }));
    expect(session.modelOf('engineer')).toBe(`model from ${FAKE_MODEL_PATH}`);
    // The idle thread takes it before its next claim, and says so.
    await waitUntil(() => lines.includes('[engineer] now on fake model'), 'the engineer to switch');
    const two = await boardOf(session).tasks.create({ subject: 'Say it again', role: 'engineer' });
    expect((await done(session, two.id)).result).toBe('second model: done');
    // The first model made one call, for task 1; task 2's went to the second.
    expect(calls(first)).toBe(1);
    expect(calls(second)).toBe(1);

    // A teammate of that role started now (a respawn) starts on the new model.
    await session.requestShutdown('engineer', 5_000);
    session.spawn('engineer', 'engineer');
    const three = await boardOf(session).tasks.create({ subject: 'Once more', role: 'engineer' });
    expect((await done(session, three.id)).result).toBe('second model: done');
    expect(calls(first)).toBe(1);
    expect(calls(second)).toBe(2);
  });

  it('lists the models per role, and refuses an unknown role or provider with what is allowed', async () => {
    const root = tempBoard('autoteam-model-');
    roots.push(root);
    const session = new LeadSession({ rootDir: root, model: { kind: 'offline', reason: 'test' } });
    sessions.push(session);
    await session.start([]);
    const out: string[] = [];
    const io: CommandIO = { session, print: (text) => out.push(text), askLead: async () => '' };

    await runLine('/model', io);
    expect(out.at(-1)).toMatch(/^Models \(next tasks\):\n {2}other roles +offline scripted model/);
    await runLine('/model wizard offline', io);
    expect(out.at(-1)).toMatch(/^error: unknown role 'wizard' \(roles: analyst, engineer, reviewer/);
    // The role is checked first: a wrong role and a wrong model name the role.
    await runLine('/model wizard frob:large', io);
    expect(out.at(-1)).toMatch(/^error: unknown role 'wizard' \(roles: analyst, engineer, reviewer/);
    await runLine('/model engineer frob:large', io);
    expect(out.at(-1)).toBe("error: unknown provider 'frob' (providers: anthropic, openai, offline; a model id with a colon goes after its provider, e.g. openai:frob:large)");
    // A provider's name with nothing after the colon: no model id to suggest a provider for.
    await runLine('/model engineer bogus:', io);
    expect(out.at(-1)).toBe("error: unknown provider 'bogus' (providers: anthropic, openai, offline)");
    await runLine('/model engineer opnai:', io);
    expect(out.at(-1)).toBe("error: unknown provider 'opnai' — did you mean openai? (providers: anthropic, openai, offline)");
    await runLine('/model engineer opnai:gpt-4.1', io);
    expect(out.at(-1)).toBe("error: unknown provider 'opnai' — did you mean openai:gpt-4.1? (providers: anthropic, openai, offline)");
    await runLine('/model engineer', io);
    expect(out.at(-1)).toMatch(/^error: usage: \/model <role> <model>/);

    await runLine('/model reviewer offline', io);
    // Chosen by name: no hint to set a key (one may be set for the other roles).
    expect(out.at(-1)).toBe('reviewer: next tasks on offline scripted model');
    await runLine('/model', io);
    expect(out.at(-1)).toMatch(/\n {2}reviewer +offline scripted model/);
  });
});

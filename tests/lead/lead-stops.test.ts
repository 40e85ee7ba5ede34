/**
 * A lead whose model loops or fails: through a loopback Messages API server (the real SDK path).
 * Turns of refused calls stop it after three; its turn limit stops it too; either way its reply says
 * it stopped, never "Done.", and what it spent counts in the session's total. A model error on a line
 * typed to the lead says how to post the requirement without it.
 */
import { describe, expect, it } from 'vitest';
import { REFUSED_TURNS } from '../../src/core/agent/loop.js';
import { type CommandIO, runLine } from '../../src/frontend/commands.js';
import { hang, MessagesServer, ok, overloaded, textMessage, toolUseMessage, unauthorized } from '../helpers/messages-server.js';
import { sessionsOnTempBoards, waitUntil } from '../helpers/repl-session.js';

const made = sessionsOnTempBoards('autoteam-lead-stops-');
const KEY = 'sk-ant-test-lead-stops-0123456789';

async function leadOn(steps: Parameters<typeof MessagesServer.start>[0]) {
  const server = await MessagesServer.start(steps);
  const session = made.session({ rootDir: made.board(), model: { kind: 'anthropic', model: 'claude-test', apiKey: KEY, baseURL: server.url }, repo: false });
  await session.start([]);
  return { server, session };
}

describe('a lead whose model loops or fails', () => {
  it('stops after three turns of refused calls, says so, and counts what they cost', async () => {
    const { server, session } = await leadOn(Array.from({ length: 10 }, () => ok(toolUseMessage('frobnicate', { how: 'hard' }))));
    try {
      const reply = await session.leadAgent().handle('Write a Python script that counts the words in a text file.');
      expect(reply.text).toBe("(stopped: the model's tool calls were refused 3 turns in a row (last: unknown tool 'frobnicate'); /tasks shows what it did)");
      expect(server.requests).toHaveLength(REFUSED_TURNS);
      // The lead's turns are counted from the log, as the header and /team show them.
      const spent = await waitUntil(() => session.snapshot().spend.members['lead'], "the lead's spend");
      await waitUntil(() => session.snapshot().spend.members['lead']!.calls === REFUSED_TURNS || null, 'all three calls');
      expect(spent.inputTokens).toBeGreaterThan(0);
      expect(session.snapshot().spend.total.calls).toBe(REFUSED_TURNS);
    } finally {
      await server.close();
    }
  });

  it('counts the summary a compaction of its conversation asks for, as a call of its own', async () => {
    const { server, session } = await leadOn([ok(toolUseMessage('list_tasks', {})), ok(textMessage('SUMMARY: looked at the board.')), ok(textMessage('The board is empty.'))]);
    try {
      const reply = await session.leadAgent({ tokenBudget: 50 }).handle('What is on the board?');
      expect(reply.text).toBe('The board is empty.');
      expect(server.requests).toHaveLength(3);
      expect(server.requests[1]!.body.tools ?? []).toEqual([]);
      await waitUntil(() => session.snapshot().spend.members['lead']?.calls === 3 || null, 'three calls in the spend');
      const calls = (await session.events()).filter((event) => event.type === 'model_call');
      expect(calls.map((event) => event.type === 'model_call' && event.purpose)).toEqual(['turn', 'compaction', 'turn']);
    } finally {
      await server.close();
    }
  });

  it('at its turn limit, says it stopped rather than "Done."', async () => {
    const { server, session } = await leadOn(Array.from({ length: 10 }, () => ok(toolUseMessage('list_tasks', {}))));
    try {
      const reply = await session.leadAgent().handle('Keep looking at the board.');
      expect(reply.text).toBe('(stopped after 8 model turns without an answer: /tasks shows what it did)');
      expect(server.requests).toHaveLength(8);
    } finally {
      await server.close();
    }
  });

  it('a model error on a line typed to the lead says how to post it without the lead; a rejected key, which stops the team too, does not', async () => {
    const { server, session } = await leadOn([...Array.from({ length: 5 }, () => overloaded()), unauthorized()]);
    try {
      const out: string[] = [];
      const io: CommandIO = { session, print: (text) => out.push(text), askLead: (text) => session.ask(text) };
      await runLine('Write a Python script that counts the words in a text file.', io);
      expect(out.at(-1)).toMatch(/^error: .*529.*\(a requirement goes on the board without the lead's model: \/post <requirement>\)$/);
      await runLine('Write a Python script that counts the words in a text file.', io);
      expect(out.at(-1)).toMatch(/^error: .*rejected/);
      expect(out.at(-1)).not.toContain('/post');
      expect(session.snapshot().tasks).toEqual([]);
    } finally {
      await server.close();
    }
  });

  it("an endpoint that never answers the lead's first call keeps the hint: /post needs no model", async () => {
    const server = await MessagesServer.start(Array.from({ length: 5 }, () => hang()));
    const session = made.session({ rootDir: made.board(), model: { kind: 'anthropic', model: 'claude-test', apiKey: KEY, baseURL: server.url, timeoutMs: 100 }, repo: false });
    await session.start([]);
    try {
      const out: string[] = [];
      const io: CommandIO = { session, print: (text) => out.push(text), askLead: (text) => session.ask(text) };
      await runLine('Write a Python script that counts the words in a text file.', io);
      expect(out.at(-1)).toMatch(/^error: No answer from .* within 100 ms \(4 retries\).*\(a requirement goes on the board without the lead's model: \/post <requirement>\)$/);
    } finally {
      await server.close();
    }
  });

  it('a teammate a rejected key stopped: the team is stopped until the person starts one again', async () => {
    const { server, session } = await leadOn(Array.from({ length: 5 }, () => unauthorized()));
    try {
      session.spawn('analyst', 'analyst');
      await session.post('Write a Python script that counts the words in a text file.');
      await waitUntil(() => session.fatalModelError(), 'the fatal model error');
      expect(session.busyReason()).toBeNull();
      // Once the analyst left, a task posted waits for an analyst; but the line to say is the model error's, already said.
      await waitUntil(() => !session.isRunning('analyst'), 'the analyst gone');
      const notices: string[] = [];
      session.on('event', (event) => {
        if (event.type === 'notice') notices.push(event.text);
      });
      const posted = await session.post('Write a Python script that counts the lines in a text file.');
      // The next board change is read after the post: it holds the new task.
      await new Promise<void>((resolve) => {
        const stop = session.subscribe((event) => {
          if (event.type !== 'board') return;
          stop();
          resolve();
        });
      });
      expect(session.snapshot().tasks.find((task) => task.id === posted.id)?.status).toBe('pending');
      expect(notices.filter((text) => text.includes('waits:'))).toEqual([]);
      session.spawn('analyst-2', 'analyst');
      expect(session.fatalModelError()).toBeNull();
    } finally {
      await server.close();
    }
  });

  it('a turn cut short (the session closing under a model that does not answer) says it stopped, not "Done."', async () => {
    const { server, session } = await leadOn([hang()]);
    try {
      const agent = session.leadAgent();
      const turn = agent.handle('Write a Python script that counts the words in a text file.');
      await waitUntil(() => server.requests.length === 1 || null, 'the call under way');
      agent.cancel();
      expect((await turn).text).toBe('(stopped: cancelled)');
    } finally {
      await server.close();
    }
  });
});

/**
 * A teammate whose host tells it of its messages (MailHint) reads its inbox when told, or once a
 * poll's interval has passed with no read, and not before every model turn: on a PostgreSQL board
 * each read was a round trip. Through the file board's real inboxes.
 */
import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { fileBoard } from '../../src/core/board/board.js';
import { MailHint, TeammateInbox } from '../../src/core/agent/teammate-inbox.js';
import { Wake } from '../../src/core/agent/wake.js';
import { tempBoard } from '../helpers/repl-session.js';

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) fs.rmSync(root, { recursive: true, force: true });
});

const POLL_MS = 5_000;

/** An analyst's inbox with a hint on a clock the test moves. */
async function hinted() {
  const root = tempBoard('autoteam-mail-hint-');
  roots.push(root);
  const board = fileBoard(root);
  await board.registry.join('analyst', 'analyst');
  const clock = { ms: 1_000_000 };
  const hint = new MailHint(() => clock.ms);
  const inbox = new TeammateInbox('analyst', board.mailbox, board.requests, new Wake(), POLL_MS, 0, hint);
  const send = (text: string) => board.mailbox.send('lead', 'analyst', text, 'message');
  return { board, clock, hint, inbox, send };
}

describe('an inbox read on news of a message', () => {
  it('is read at first, and after a read that brought messages (a batch: more may wait), then not again until a message is told of', async () => {
    const { hint, inbox, send } = await hinted();
    await send('first');
    expect((await inbox.betweenTurns(null)).inject).toContain('first');
    await send('second, untold');
    expect((await inbox.betweenTurns(null)).inject).toContain('second, untold');
    expect(await inbox.betweenTurns(null)).toEqual({});

    // Sent, and not told: the next turn does not read the inbox, so the message waits there.
    await send('third');
    expect(await inbox.betweenTurns(null)).toEqual({});
    hint.arrived();
    expect((await inbox.betweenTurns(null)).inject).toContain('third');
  });

  it("is read once a poll's interval has passed with no read, told or not (news lost with a connection)", async () => {
    const { clock, inbox, send } = await hinted();
    expect(await inbox.betweenTurns(null)).toEqual({});
    await send('untold');
    // A tenth early counts: an idle teammate's poll timer may fire a little before the interval is up.
    clock.ms += POLL_MS * 0.9 - 1;
    expect(await inbox.betweenTurns(null)).toEqual({});
    clock.ms += 1;
    expect((await inbox.betweenTurns(null)).inject).toContain('untold');
  });

  it('an idle teammate reads it the same way', async () => {
    const { hint, inbox, send } = await hinted();
    expect((await inbox.whileIdle()).conversation).toEqual([]);
    await send('while idle');
    expect((await inbox.whileIdle()).conversation).toEqual([]);
    hint.arrived();
    expect((await inbox.whileIdle()).conversation.map((message) => message.content)).toEqual(['while idle']);
  });

  it('a read that failed is made again on the next turn, without news', async () => {
    const { board, clock, inbox, send } = await hinted();
    await inbox.betweenTurns(null);
    await send('kept');
    const drain = board.mailbox.drain.bind(board.mailbox);
    board.mailbox.drain = async () => {
      throw new Error('the board is away');
    };
    clock.ms += POLL_MS;
    await expect(inbox.betweenTurns(null)).rejects.toThrow('the board is away');
    board.mailbox.drain = drain;
    expect((await inbox.betweenTurns(null)).inject).toContain('kept');
  });

  it('a message told of while the read is under way is read on the next turn', async () => {
    const { board, hint, inbox, send } = await hinted();
    await inbox.betweenTurns(null);
    hint.arrived();
    // The read starts; the message lands and is told of before its reply comes back.
    const drain = board.mailbox.drain.bind(board.mailbox);
    board.mailbox.drain = async (name) => {
      const read = await drain(name);
      await send('during the read');
      hint.arrived();
      return read;
    };
    expect(await inbox.betweenTurns(null)).toEqual({});
    board.mailbox.drain = drain;
    expect((await inbox.betweenTurns(null)).inject).toContain('during the read');
  });

  it('a wait for an answer reads on every wake, and a read that found nothing spends the news', async () => {
    const { board, hint, inbox, send } = await hinted();
    await inbox.betweenTurns(null);
    await board.mailbox.send('lead', 'analyst', 'yes', 'answer');
    hint.arrived();
    const answer = await inbox.waitFor((message) => message.type === 'answer', 1_000, new AbortController().signal);
    expect(answer?.content).toBe('yes');
    // News of a message some read already took: the wait's read finds nothing, and the next turn reads no more.
    hint.arrived();
    expect(await inbox.waitFor((message) => message.type === 'answer', 0, new AbortController().signal)).toBeNull();
    await send('after the wait, untold');
    expect(await inbox.betweenTurns(null)).toEqual({});
  });

  it('without a hint, every turn reads the inbox', async () => {
    const root = tempBoard('autoteam-mail-hint-');
    roots.push(root);
    const board = fileBoard(root);
    await board.registry.join('analyst', 'analyst');
    const inbox = new TeammateInbox('analyst', board.mailbox, board.requests, new Wake(), POLL_MS);
    expect(await inbox.betweenTurns(null)).toEqual({});
    await board.mailbox.send('lead', 'analyst', 'untold', 'message');
    expect((await inbox.betweenTurns(null)).inject).toContain('untold');
  });
});

/**
 * Inbox sizes that cannot wedge a board, on both backends: an inbox at its limit refuses the sender,
 * a drain reads an inbox a batch at a time, and the lines it cannot read are counted and named.
 */
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { Board } from '../../src/core/board/board.js';
import { isPostgresUrl } from '../../src/core/board/pg/url.js';
import type { Message } from '../../src/core/board/schemas.js';
import { loadTeammateSettings } from '../../src/core/agent/settings.js';
import { boardBackends } from '../helpers/board-backends.js';
import { usePostgres } from '../helpers/postgres.js';

usePostgres();

const MB = 1024 * 1024;
const { backends, open: openAt } = boardBackends();



function open(location: string, maxInboxBytes?: number): Promise<Board> {
  return openAt(location, maxInboxBytes ? { maxInboxBytes } : {});
}

/** A line of inbox JSON of about 1 KB. */
function messageLine(i: number, to: string): string {
  return JSON.stringify({ id: `m-${i}`, type: 'message', from: 'lead', to, content: `${i} ${'c'.repeat(1000)}`, at: '2026-01-01T00:00:00.000Z' });
}

describe.each(backends)('$name: inbox sizes', (backend) => {
  async function team(location: string, maxInboxBytes?: number): Promise<Board> {
    const board = await open(location, maxInboxBytes);
    await board.registry.ensure('crew');
    await board.registry.join('eng', 'engineer');
    return board;
  }

  it('refuses the sender of a message to a full inbox in one line, and takes messages again once drained', async () => {
    const board = await team(await backend.location(), 64 * 1024);
    let sent = 0;
    let refused: (Error & { code?: string }) | null = null;
    while (!refused && sent < 200) {
      await board.mailbox.send('lead', 'eng', `${sent} ${'x'.repeat(1000)}`).then(() => sent++, (error: Error) => (refused = error));
    }
    expect(refused).not.toBeNull();
    expect(refused!.code).toBe('INBOX_FULL');
    expect(refused!.message).toMatch(/^the inbox of 'eng' is full \(.+; the limit is 64\.0 KB, MAX_INBOX_MB\): the message was not delivered$/);
    expect(sent).toBeGreaterThan(40);
    expect(sent).toBeLessThan(70);
    const drained: Message[] = [];
    for (let batch = await board.mailbox.drain('eng'); batch.length; batch = await board.mailbox.drain('eng')) drained.push(...batch);
    expect(drained.map((m) => Number(m.content.split(' ')[0]))).toEqual([...Array(sent).keys()]);
    await board.mailbox.send('lead', 'eng', 'room again');
    expect((await board.mailbox.drain('eng')).map((m) => m.content)).toEqual(['room again']);
  });

  it('drains a large inbox in bounded batches: every message once, in order', { timeout: 60_000 }, async () => {
    const location = await backend.location();
    const board = await team(location);
    const count = isPostgresUrl(location) ? 1_000 : 4_000;
    if (isPostgresUrl(location)) {
      const client = new pg.Client({ connectionString: location });
      await client.connect();
      await client.query(`INSERT INTO autoteam_messages (recipient, body) SELECT 'eng', (jsonb_build_object('id', 'm-' || i, 'type', 'message', 'from', 'lead', 'to', 'eng', 'content', i || ' ' || repeat('c', 1000), 'at', '2026-01-01T00:00:00.000Z')) FROM generate_series(0, $1 - 1) AS i`, [count]);
      await client.end();
    } else {
      fs.writeFileSync(board.mailbox.inboxPath('eng'), Array.from({ length: count }, (_, i) => `${messageLine(i, 'eng')}\n`).join(''));
    }
    const batches: Message[][] = [];
    for (let batch = await board.mailbox.drain('eng'); batch.length; batch = await board.mailbox.drain('eng')) batches.push(batch);
    // A batch is about 1 MB of the file (whole lines), or 200 rows: never the whole inbox at once.
    const bound = isPostgresUrl(location) ? 200 : Math.ceil(MB / (messageLine(0, 'eng').length + 1)) + 1;
    expect(batches.length).toBeGreaterThanOrEqual(Math.ceil(count / bound));
    for (const batch of batches) expect(batch.length).toBeLessThanOrEqual(bound);
    expect(batches.flat().map((m) => Number(m.content.split(' ')[0]))).toEqual([...Array(count).keys()]);
    if (!isPostgresUrl(location)) expect(fs.readdirSync(board.mailbox.dir).filter((name) => name.endsWith('.draining'))).toEqual([]);
  });

  it('counts and names the lines it cannot read, and moves them aside', async () => {
    const location = await backend.location();
    const board = await team(location);
    if (isPostgresUrl(location)) {
      const client = new pg.Client({ connectionString: location });
      await client.connect();
      for (const body of [JSON.parse(messageLine(1, 'eng')), { type: 'message', note: 'no id' }, [1, 2], JSON.parse(messageLine(2, 'eng'))]) {
        await client.query("INSERT INTO autoteam_messages (recipient, body) VALUES ('eng', $1)", [JSON.stringify(body)]);
      }
      await client.end();
    } else {
      fs.writeFileSync(board.mailbox.inboxPath('eng'), [messageLine(1, 'eng'), '{"type": "message", "note": "no id"', '[1, 2]', messageLine(2, 'eng'), ''].join('\n'));
    }
    expect((await board.mailbox.drain('eng')).map((m) => m.id)).toEqual(['m-1', 'm-2']);
    const rejected = board.mailbox.takeRejected('eng');
    expect(rejected).toMatchObject({ inbox: 'eng', count: 2 });
    if (isPostgresUrl(location)) {
      expect(rejected!.movedTo).toBe("recipient 'eng.rejected' in autoteam_messages");
      expect(rejected!.lines).toEqual([{ at: expect.stringMatching(/^message \d+$/), problem: expect.stringMatching(/^id: /) }, { at: expect.stringMatching(/^message \d+$/), problem: expect.stringMatching(/^\(root\): /) }]);
    } else {
      expect(rejected!.movedTo).toBe(path.join('.team', 'inbox', 'eng.rejected.jsonl'));
      expect(rejected!.lines).toEqual([{ at: 'line 2', problem: expect.stringMatching(/^not valid JSON/) }, { at: 'line 3', problem: expect.stringMatching(/^\(root\): /) }]);
      expect(fs.readFileSync(board.mailbox.rejectedPath('eng'), 'utf8')).toBe('{"type": "message", "note": "no id"\n[1, 2]\n');
    }
    expect(board.mailbox.takeRejected('eng')).toBeNull();
    expect(await board.mailbox.rejectedCount('eng')).toBe(2);
    expect(await board.mailbox.rejectedCount('lead')).toBe(0);
  });
});

describe('MAX_INBOX_MB', () => {
  it('is read like the other limits, and a bad value names it', () => {
    expect(loadTeammateSettings({}).maxInboxBytes).toBe(16 * MB);
    expect(loadTeammateSettings({ MAX_INBOX_MB: '2' }).maxInboxBytes).toBe(2 * MB);
    expect(() => loadTeammateSettings({ MAX_INBOX_MB: 'lots' })).toThrow(/^MAX_INBOX_MB: 'lots' is not a whole number/);
    expect(() => loadTeammateSettings({ MAX_INBOX_MB: '0' })).toThrow(/^MAX_INBOX_MB: 0 is too small \(at least 1\)$/);
  });
});

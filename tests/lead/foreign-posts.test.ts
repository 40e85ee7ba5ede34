/**
 * A pipeline posted by another process (`autoteam post` in another shell), or through the session by
 * the web board beside the REPL, is said in the lead's activity once, as its first task is posted; the
 * lead's own posts and a retry into a pipeline the board already held are not (the front end that
 * posts says it, and the retry has its own line).
 */
import { describe, expect, it } from 'vitest';
import { fileBoard } from '../../src/core/board/board.js';
import { postWork } from '../../src/core/lead/post-work.js';
import type { LeadEvent, LeadSession } from '../../src/core/lead/session.js';
import { Pipeline } from '../../src/core/stages/pipeline.js';
import { startWebBoard } from '../../src/web/server.js';
import { sessionsOnTempBoards, waitUntil } from '../helpers/repl-session.js';

const made = sessionsOnTempBoards('autoteam-foreign-post-');

/** The session's notices of posts (a session without a team also says each pipeline waits for one). */
function notices(lead: LeadSession): string[] {
  const said: string[] = [];
  lead.subscribe((event: LeadEvent) => {
    if (event.type === 'notice' && / posted from /.test(event.text)) said.push(event.text);
  });
  return said;
}

describe('a pipeline posted from another process', () => {
  it('is said once when posted elsewhere, never for the session\'s own post', async () => {
    const root = made.board();
    const lead = made.session({ rootDir: root, model: { kind: 'offline', reason: 'test' } });
    await lead.start([]);
    const said = notices(lead);
    const own = await lead.post('Write a Python script that prints the date.');
    const other = fileBoard(root);
    const { tasks } = await postWork(other, ['Write a Python script that counts words.']);
    // The log holds the own post's events before the other's, and the session shows them in order.
    await waitUntil(() => said.length > 0, 'the notice of the foreign post');
    expect(own.pipeline).toBe(1);
    expect(said).toEqual([`pipeline #2 posted from another process: task #${tasks[0]!.id} (requirements) — ${tasks[0]!.subject}`]);
  });

  it('says nothing of a retry posted elsewhere into a pipeline the board held before the session', async () => {
    const root = made.board();
    const other = fileBoard(root);
    const { tasks } = await postWork(other, ['Write a Python script that counts words.']);
    const pipelines = new Pipeline(other.tasks, other.mailbox, { events: other.sink });
    await pipelines.cancel(1, 'lead');
    const lead = made.session({ rootDir: root, model: { kind: 'offline', reason: 'test' } });
    await lead.start([]);
    const said = notices(lead);
    const shown: string[] = [];
    lead.subscribe((event) => {
      if (event.type === 'team') shown.push(event.event.type);
    });
    const retried = await pipelines.retry(1, 'lead');
    expect(retried.id).toBeGreaterThan(tasks[0]!.id);
    await waitUntil(() => shown.includes('task_retried'), 'the retry in the log the session follows');
    // A pipeline posted after it is still said: the first one did not stop the watch.
    await postWork(other, ['Write a Python script that prints the date.']);
    await waitUntil(() => said.length > 0, 'the notice of the second foreign post');
    expect(said).toEqual([expect.stringMatching(/^pipeline #2 posted from another process: task #\d+ \(requirements\) — /)]);
  });

  it('is said, naming the web board, when the web board beside the REPL posts it', async () => {
    const root = made.board();
    const lead = made.session({ rootDir: root, model: { kind: 'offline', reason: 'test' } });
    await lead.start([]);
    const said = notices(lead);
    const web = await startWebBoard({ controls: lead, port: 0 });
    try {
      const reply = await fetch(`${new URL(web.url).origin}/api/requirements`, {
        method: 'POST',
        headers: { authorization: `Bearer ${web.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ text: 'Count words in a file' }),
      });
      expect(reply.status).toBe(200);
      await waitUntil(() => said.length > 0, 'the notice of the web post');
      expect(said).toEqual(['pipeline #1 posted from the web board: task #1 (requirements) — Analyse: Count words in a file']);
    } finally {
      await web.close('the test ended');
    }
  });
});

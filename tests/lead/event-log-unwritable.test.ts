/**
 * The file board's event log cannot be written (a folder where the file was, a full disk): the lead
 * says so once, naming the file, and works on. Before, every event was dropped without a word.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type LeadEvent, LeadSession } from '../../src/core/lead/session.js';
import { until } from '../helpers/agent-wait.js';

const roots: string[] = [];
const sessions: LeadSession[] = [];
afterEach(async () => {
  for (const session of sessions.splice(0)) await session.close(1_000).catch(() => undefined);
  for (const root of roots.splice(0)) fs.rmSync(root, { recursive: true, force: true });
});

describe('an event log that cannot be written', () => {
  it('is said once, naming the file, and the posts go on', async () => {
    const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-unlogged-')));
    roots.push(root);
    fs.mkdirSync(path.join(root, '.team', 'events.jsonl'), { recursive: true });
    const session = new LeadSession({ rootDir: root, model: { kind: 'offline', reason: 'test' }, settings: { pollMs: 100, idleTimeoutMs: 0 } });
    sessions.push(session);
    const errors: Array<Extract<LeadEvent, { type: 'error' }>> = [];
    session.on('event', (event) => {
      if (event.type === 'error') errors.push(event);
    });
    await session.start([]);
    const first = await session.post('Write a greeting program.');
    const second = await session.post('Write a farewell program.');
    await until(() => errors.length > 0 || undefined, 'the error');
    expect(session.task(first.id)).not.toBeNull();
    expect(session.task(second.id)).not.toBeNull();
    await until(() => session.task(second.id)?.history.length || undefined, 'the second post written');
    expect(errors).toEqual([{ type: 'error', code: 'EVENT_LOG', message: expect.stringMatching(new RegExp(`^${path.join(root, '.team', 'events.jsonl')} cannot be written \\(.*EISDIR.*\\): the team works on, its events unrecorded$`)) }]);
  });
});

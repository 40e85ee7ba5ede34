/**
 * Free text typed while the team is still starting (the REPL's prompt is up from its first frame)
 * goes to the lead once the start is over, instead of being refused and lost; a session that was
 * never started still refuses it.
 */
import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { LeadSession } from '../../src/core/lead/session.js';
import { tempBoard } from '../helpers/repl-session.js';

const roots: string[] = [];
const sessions: LeadSession[] = [];
afterEach(async () => {
  for (const session of sessions.splice(0)) await session.close(1_000).catch(() => undefined);
  for (const root of roots.splice(0)) fs.rmSync(root, { recursive: true, force: true });
});

function session(): LeadSession {
  const root = tempBoard();
  roots.push(root);
  const made = new LeadSession({ rootDir: root, model: { kind: 'offline', reason: 'test' } });
  sessions.push(made);
  return made;
}

describe('the lead asked while the team starts', () => {
  it('answers once the start is over', async () => {
    const lead = session();
    const order: string[] = [];
    const starting = lead.start([]).then(() => order.push('started'));
    const answer = lead.ask('what is on the board?').then((text) => {
      order.push('answered');
      return text;
    });
    await starting;
    expect((await answer).length).toBeGreaterThan(0);
    expect(order).toEqual(['started', 'answered']);
  });

  it('is refused by a session that was never started', async () => {
    await expect(session().ask('hello')).rejects.toThrow('the session has not started');
  });
});

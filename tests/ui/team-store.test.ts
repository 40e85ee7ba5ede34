import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import type { LeadSession } from '../../src/core/lead/session.js';
import { TeamStore } from '../../src/ui/stores.js';
import { boardOf, quietSession, waitUntil } from '../helpers/repl-session.js';

describe('TeamStore', () => {
  let session: LeadSession | null = null;
  afterEach(async () => {
    await session?.close(500);
    session = null;
  });

  it('carries, per member, how many unreadable inbox lines were moved aside, from the session', async () => {
    session = await quietSession();
    await boardOf(session).registry.join('engineer', 'engineer');
    // A teammate's drain (in its own thread) moved two lines aside; the session counts them on the board.
    fs.writeFileSync(boardOf(session).mailbox.rejectedPath('engineer'), 'not json\n[1, 2]\n');
    const store = new TeamStore(session);
    const stop = store.follow();
    try {
      await waitUntil(() => store.get().rejected?.engineer === 2, 'the count for engineer');
      expect(store.get().rejected).toEqual({ engineer: 2 });
      fs.appendFileSync(boardOf(session).mailbox.rejectedPath('engineer'), '{"half":\n');
      store.reload();
      await waitUntil(() => store.get().rejected?.engineer === 3, 'the new count');
    } finally {
      stop();
    }
  });
});

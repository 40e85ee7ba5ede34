import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import type { LeadSession } from '../../src/core/lead/session.js';
import { TeamStore } from '../../src/ui/stores.js';
import { boardOf, quietSession, waitUntil } from '../helpers/repl-session.js';
import { modelCallEvent } from '../helpers/model-call.js';

describe('TeamStore', () => {
  let session: LeadSession | null = null;
  afterEach(async () => {
    await session?.close(500);
    session = null;
  });

  it('says the team is starting until a teammate of this process reports, not that there is none', async () => {
    session = await quietSession();
    const store = new TeamStore(session);
    const stop = store.follow();
    try {
      expect(store.get().starting).toBe(true);
      store.started(1);
      expect(store.get()).toMatchObject({ starting: true, members: [] });
      session.spawn('engineer', 'engineer');
      // Listed `starting` from its spawn (a reload reads the session's snapshot); its own status once it reports.
      await waitUntil(() => store.get().members.some((member) => member.name === 'engineer' && member.status !== 'starting') || null, 'the engineer reported');
      expect(store.get().starting).toBe(false);
    } finally {
      stop();
    }
  });

  it('says the team is not starting when none was started, or when no thread reports within its patience', async () => {
    session = await quietSession();
    const none = new TeamStore(session);
    none.started(0);
    expect(none.get().starting).toBe(false);
    const silent = new TeamStore(session);
    silent.started(3, 50);
    await waitUntil(() => silent.get().starting === false || null, 'the patience ran out');
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

  it("shows what a worker of another process spent, from its model calls in the log", async () => {
    session = await quietSession();
    const worker = boardOf(session);
    await worker.registry.join('eng-x', 'engineer', { status: 'idle', pid: process.pid });
    const store = new TeamStore(session);
    const stop = store.follow();
    try {
      worker.sink.emit(modelCallEvent('eng-x', 'engineer', 1_200));
      await worker.sink.flush();
      await waitUntil(() => store.get().spend['eng-x'], "eng-x's spend in the panel");
      expect(store.get().spend).toMatchObject({ 'eng-x': '1.2k tok', '': '1.2k tok' });
    } finally {
      stop();
    }
  });
});

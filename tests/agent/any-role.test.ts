/**
 * A teammate of role `any` fills in for the roles the team lacks: it claims the oldest claimable task
 * of a role no other live member has (or of none), never one a live specialist is there for, leaves
 * the live lead's idled-out teammates their tasks for a while, and takes a role's tasks once nobody
 * else will. On the real file board, registry and lead lease.
 */
import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { claimAsAny, RESTING_GRACE_MS } from '../../src/core/agent/any-role.js';
import { fileBoard } from '../../src/core/board/board.js';
import { tempBoard } from '../helpers/repl-session.js';

const roots: string[] = [];
const boards: Array<ReturnType<typeof fileBoard>> = [];
afterEach(async () => {
  // Closed first: an open board's log would write its folder again after the removal.
  for (const board of boards.splice(0)) await board.close();
  for (const root of roots.splice(0)) fs.rmSync(root, { recursive: true, force: true });
});

describe('claimAsAny', () => {
  it('leaves a live specialist its tasks, takes the roles nobody has, and a gone specialist\'s', async () => {
    const root = tempBoard('autoteam-any-role-');
    roots.push(root);
    const board = fileBoard(root);
    boards.push(board);
    await board.registry.join('generalist', 'any', { status: 'idle', pid: process.pid });
    await board.registry.join('reviewer', 'reviewer', { status: 'idle', pid: process.pid });
    // Another generalist does not cover a role: both fill in.
    await board.registry.join('generalist-2', 'any', { status: 'idle', pid: process.pid });
    const review = await board.tasks.create({ subject: 'review', role: 'reviewer' });
    const implement = await board.tasks.create({ subject: 'implement', role: 'engineer' });
    const general = await board.tasks.create({ subject: 'general' });

    expect(await claimAsAny(board.tasks, board.registry, 'generalist', null)).toMatchObject({ ok: true, task: { id: implement.id, owner: 'generalist' } });
    expect(await claimAsAny(board.tasks, board.registry, 'generalist', null)).toMatchObject({ ok: true, task: { id: general.id } });
    expect(await claimAsAny(board.tasks, board.registry, 'generalist', null)).toBeNull();
    expect(board.tasks.get(review.id).status).toBe('pending');

    await board.registry.updateMember('reviewer', { status: 'shutdown' });
    expect(await claimAsAny(board.tasks, board.registry, 'generalist-2', null)).toMatchObject({ ok: true, task: { id: review.id, owner: 'generalist-2' } });
  });

  it("leaves the live lead's idled-out teammates their role's tasks for a while, then takes them", async () => {
    const root = tempBoard('autoteam-any-resting-');
    roots.push(root);
    const board = fileBoard(root);
    boards.push(board);
    const lease = board.lease();
    expect(await lease.acquire()).toBeNull();
    const lead = lease.read()!;
    // The lead's analyst idled out (its thread shares the lead's pid); a reviewer of a lead long gone.
    await board.registry.join('analyst', 'analyst', { status: 'idle', pid: lead.pid });
    await board.registry.updateMember('analyst', { status: 'shutdown' });
    await board.registry.join('reviewer', 'reviewer', { status: 'idle', pid: 999_999_999 });
    await board.registry.updateMember('reviewer', { status: 'shutdown' });
    const analysis = await board.tasks.create({ subject: 'analyse', role: 'analyst' });
    const review = await board.tasks.create({ subject: 'review', role: 'reviewer' });
    const posted = Date.parse(analysis.updatedAt);

    expect(await claimAsAny(board.tasks, board.registry, 'generalist', lead, posted + 1_000)).toMatchObject({ ok: true, task: { id: review.id } });
    expect(await claimAsAny(board.tasks, board.registry, 'generalist', lead, posted + 1_000)).toBeNull();
    // Not started again in time (shut down for good): the generalist takes it.
    expect(await claimAsAny(board.tasks, board.registry, 'generalist', lead, posted + RESTING_GRACE_MS + 1)).toMatchObject({ ok: true, task: { id: analysis.id } });
    // With no live lead, nobody will start the analyst again: nothing is left to it.
    const again = await board.tasks.create({ subject: 'analyse again', role: 'analyst' });
    expect(await claimAsAny(board.tasks, board.registry, 'generalist', null, Date.parse(again.updatedAt))).toMatchObject({ ok: true, task: { id: again.id } });
    await lease.release();
  });
});

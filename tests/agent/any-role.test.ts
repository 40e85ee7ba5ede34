/**
 * A teammate of role `any` fills in for the roles the team lacks: it claims the oldest claimable task
 * of a role no other live member has (or of none), never one a live specialist is there for, and
 * takes that role's tasks once the specialist is gone. On the real file board and registry.
 */
import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { claimAsAny } from '../../src/core/agent/any-role.js';
import { fileBoard } from '../../src/core/board/board.js';
import { tempBoard } from '../helpers/repl-session.js';

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) fs.rmSync(root, { recursive: true, force: true });
});

describe('claimAsAny', () => {
  it('leaves a live specialist its tasks, takes the roles nobody has, and a gone specialist\'s', async () => {
    const root = tempBoard('autoteam-any-role-');
    roots.push(root);
    const board = fileBoard(root);
    await board.registry.join('generalist', 'any', { status: 'idle', pid: process.pid });
    await board.registry.join('reviewer', 'reviewer', { status: 'idle', pid: process.pid });
    // Another generalist does not cover a role: both fill in.
    await board.registry.join('generalist-2', 'any', { status: 'idle', pid: process.pid });
    const review = await board.tasks.create({ subject: 'review', role: 'reviewer' });
    const implement = await board.tasks.create({ subject: 'implement', role: 'engineer' });
    const general = await board.tasks.create({ subject: 'general' });

    expect(await claimAsAny(board.tasks, board.registry, 'generalist')).toMatchObject({ ok: true, task: { id: implement.id, owner: 'generalist' } });
    expect(await claimAsAny(board.tasks, board.registry, 'generalist')).toMatchObject({ ok: true, task: { id: general.id } });
    expect(await claimAsAny(board.tasks, board.registry, 'generalist')).toBeNull();
    expect(board.tasks.get(review.id).status).toBe('pending');

    await board.registry.updateMember('reviewer', { status: 'shutdown' });
    expect(await claimAsAny(board.tasks, board.registry, 'generalist-2')).toMatchObject({ ok: true, task: { id: review.id, owner: 'generalist-2' } });
  });
});

/** How /team (and the REPL's team panel) says one member: a gone member's task is the one it had, not one it holds. */
import { describe, expect, it } from 'vitest';
import type { Member } from '../../src/core/board/schemas.js';
import { formatMember } from '../../src/frontend/format.js';

const member = (status: Member['status'], task: number | null, reason?: string): Member =>
  ({ name: 'e2', role: 'engineer', status, task, since: '2026-12-03T00:00:00.000Z', pid: 1, host: 'h', ...(reason ? { reason } : {}) }) satisfies Member;

describe('formatMember', () => {
  it('says the task a live member holds, and the one a gone member had', () => {
    expect(formatMember(member('working', 3))).toBe('e2 (engineer): working #3');
    expect(formatMember(member('dead', 1, 'pid 15670 is not running'))).toBe('e2 (engineer): dead, had #1 — pid 15670 is not running');
    expect(formatMember(member('shutdown', 2, 'idle for 60 s'))).toBe('e2 (engineer): shutdown, had #2 — idle for 60 s');
    expect(formatMember(member('idle', null), true)).toBe('e2 (engineer): idle [lead]');
  });
});

/**
 * Which members a snapshot lists: those there now and those that left since this process began — and,
 * for a web board or MCP server of its own beside a live lead, that lead's teammates that shut down
 * before it began (resting on their idle timeout, or kept down): the lead's team now, not its past.
 */
import { describe, expect, it } from 'vitest';
import { HOST } from '../../src/core/board/liveness.js';
import type { Member } from '../../src/core/board/schemas.js';
import { buildSnapshot, type SnapshotParts } from '../../src/core/lead/snapshot.js';

const LONG_AGO = '2026-01-01T00:00:00.000Z';
const member = (name: string, pid: number, status: Member['status'] = 'shutdown'): Member => ({ name, role: 'analyst', status, task: null, since: LONG_AGO, heartbeat: LONG_AGO, pid, host: HOST });
const NONE = { calls: 0, inputTokens: 0, outputTokens: 0, cost: null };

function parts(members: Member[], leader?: SnapshotParts['leader']): SnapshotParts {
  return {
    board: { location: '/b', where: 'here', rootDir: '/b', repository: null } as never,
    tasks: [],
    problems: [],
    team: { team: 't', lead: 'lead', members },
    questions: [],
    plans: [],
    spend: { of: () => NONE, total: () => NONE, byMember: () => ({}) } as never,
    models: { label: '', ids: '', offline: true, fallback: '', of: () => 'm', costOf: () => null } as never,
    roles: [],
    running: () => false,
    autoAnswer: false,
    ...(leader ? { leader } : {}),
  };
}

describe('the members a snapshot lists', () => {
  it("keeps a live lead's teammates that shut down before this process began, and leaves out others that did", () => {
    // The lead: another live process of this host (the test runner's parent).
    const lead = process.ppid;
    const members = [member('analyst', lead), member('engineer-of-yesterday', 999_999_999)];
    const names = (leader?: SnapshotParts['leader']) => buildSnapshot(parts(members, leader)).team.members.map((shown) => shown.name);
    expect(names({ state: 'elsewhere', pid: lead, host: HOST, since: LONG_AGO })).toEqual(['analyst']);
    expect(names({ state: 'none', pid: null, host: null, since: null })).toEqual([]);
    expect(names()).toEqual([]);
  });
});

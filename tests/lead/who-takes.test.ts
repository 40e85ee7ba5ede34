/** The note a post from the web board or MCP gets when no teammate will take its task. */
import { describe, expect, it } from 'vitest';
import type { LeaderView } from '../../src/core/lead/lead-api.js';
import { waitsForRole } from '../../src/core/lead/who-takes.js';

const NOW = Date.parse('2026-12-07T12:00:00Z');
const task = { id: 4, pipeline: 2, stage: 'requirements', role: 'analyst' } as const;
const fresh = new Date(NOW - 1_000).toISOString();
// Another live process of this host (the test runner's parent): a worker that is not the lead.
const worker = (role: string, status: 'idle' | 'shutdown' | 'dead' = 'idle', extra: object = {}) => ({ role, status, pid: process.ppid, host: undefined, heartbeat: fresh, since: fresh, ...extra });
const here: LeaderView = { state: 'here', pid: process.pid, host: null, since: fresh };

describe('waitsForRole', () => {
  it('says the task waits, and what takes it, where no teammate of its role runs or rests with this process', () => {
    expect(waitsForRole(task, [], here, NOW)).toBe("pipeline #2 waits: task #4 (requirements) is for a teammate of role analyst, and none runs: autoteam worker --role analyst on this board, or /spawn <name> analyst where the lead has a terminal, takes it");
    expect(waitsForRole(task, [worker('engineer')], { state: 'none', pid: null, host: null, since: null }, NOW)).toBe('pipeline #2 waits: task #4 (requirements) is for a teammate of role analyst, and none runs: autoteam worker --role analyst on this board takes it, or a lead (autoteam) with its team');
    // Shut down for good (/shutdown), dead, or quiet too long: none takes it.
    for (const gone of [worker('analyst', 'shutdown'), worker('analyst', 'dead'), worker('analyst', 'idle', { heartbeat: new Date(NOW - 3_600_000).toISOString() })]) expect(waitsForRole(task, [gone], here, NOW), JSON.stringify(gone)).not.toBeNull();
    expect(waitsForRole({ ...task, pipeline: null }, [], here, NOW)).toMatch(/^task #4 waits: it is for a teammate of role analyst/);
  });

  it('says nothing where a live teammate of the role or of role any runs, one of this lead rests, the lead is elsewhere, or the task has no role', () => {
    expect(waitsForRole(task, [worker('analyst')], here, NOW)).toBeNull();
    expect(waitsForRole(task, [worker('any')], here, NOW)).toBeNull();
    expect(waitsForRole(task, [worker('analyst', 'shutdown', { resting: true })], here, NOW)).toBeNull();
    expect(waitsForRole(task, [], { state: 'elsewhere', pid: 1, host: 'other', since: fresh }, NOW)).toBeNull();
    expect(waitsForRole({ ...task, role: null }, [], here, NOW)).toBeNull();
  });
});

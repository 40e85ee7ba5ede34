/**
 * What `post`, `retry` and `merge --queue` say of who works what they put on the board: beside a lead,
 * its team — unless it runs none of a role the work needs (a lead started with --no-team).
 */
import os from 'node:os';
import { describe, expect, it } from 'vitest';
import type { Member } from '../../src/core/board/schemas.js';
import { coveredBeside, whoWorks } from '../../src/cli/post-command.js';

const ROLES = ['analyst', 'engineer', 'reviewer'];
const now = new Date().toISOString();
const member = (name: string, role: string, status: Member['status'], pid: number): Member => ({ name, role, status, task: null, since: now, pid, host: os.hostname(), heartbeat: now });
const lead = { state: 'elsewhere' as const, pid: 4242, host: os.hostname(), since: now };

describe('who works what was posted', () => {
  it("beside a lead with its team, resting or not: the lead's team", () => {
    const registry = { members: () => [member('analyst', 'analyst', 'idle', 4242), member('engineer', 'engineer', 'shutdown', 4242), member('reviewer', 'reviewer', 'working', 4242)] };
    expect(whoWorks(lead, ROLES, coveredBeside(registry, lead))).toBe(`the lead (pid 4242 on ${os.hostname()}) and its team pick them up (autoteam tasks follows them)`);
  });

  it('beside a lead that runs no team (--no-team): says which stages nobody works, and who would; a live worker elsewhere counts', () => {
    const none = { members: () => [member('engineer', 'engineer', 'shutdown', 1111)] };
    expect(whoWorks(lead, ROLES, coveredBeside(none, lead))).toBe(
      `the lead (pid 4242 on ${os.hostname()}) holds the board, but no teammate of role analyst, engineer, reviewer runs there or elsewhere (a lead started with --no-team starts none): their stages wait for workers (autoteam worker --role analyst, and one with --role engineer, and one with --role reviewer)`,
    );
    const worker = { members: () => [member('analyst', 'analyst', 'idle', process.pid), member('reviewer', 'reviewer', 'idle', process.pid)] };
    expect(whoWorks(lead, ROLES, coveredBeside(worker, lead))).toBe(
      `the lead (pid 4242 on ${os.hostname()}) holds the board, but no teammate of role engineer runs there or elsewhere (a lead started with --no-team starts none): its stage waits for workers (autoteam worker --role engineer)`,
    );
    // A task of no stage ('…'): with no lead, a live worker of role any takes it; beside a lead, its team.
    const anyWorker = { members: () => [member('dev', 'any', 'idle', process.pid)] };
    expect(whoWorks({ state: 'none', pid: null, host: null, since: null }, undefined, coveredBeside(anyWorker, { state: 'none', pid: null, host: null, since: null }))).toMatch(/^no lead runs on this board: its live workers pick them up/);
    expect(whoWorks(lead, undefined, coveredBeside(none, lead))).toMatch(/and its team pick them up/);
    // A generalist (role any) of the lead's own team works any stage.
    const generalist = { members: () => [member('dev', 'any', 'shutdown', 4242)] };
    expect(whoWorks(lead, ROLES, coveredBeside(generalist, lead))).toMatch(/and its team pick them up/);
  });
});

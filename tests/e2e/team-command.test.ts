/**
 * `autoteam team`: the team from the shell, as its config records it. Beside a real lead in line mode
 * (the built CLI, its stdin held open): the lead's pid, its teammates idle, then shut down with their
 * idle timeout once they idled out; a member whose record says live but whose process is gone is said
 * not to run; `--json` is the config; a board with no team says so.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fileBoard } from '../../src/core/board/board.js';
import { TeamRegistry } from '../../src/core/board/team-registry.js';
import { until } from '../helpers/agent-wait.js';
import { CliChild } from '../helpers/cli-child.js';
import { describeRun, runCli, tempBoard } from '../helpers/pipeline-cli.js';

const roots: string[] = [];
afterAll(() => {
  for (const root of roots) fs.rmSync(root, { recursive: true, force: true });
});

describe('autoteam team', () => {
  it('lists the lead and its teammates, idle then idled out, and a member whose process is gone as not running', async () => {
    const root = tempBoard();
    roots.push(root);
    const lead = CliChild.start(['--dir', root, '--idle-timeout', '1s'], { cwd: root, stdin: 'pipe' });
    try {
      await lead.waitForLine((line) => line.startsWith('Type /help'), 'the line mode prompt');
      const team = async () => {
        const run = await runCli(['team', '--dir', root], { cwd: root });
        expect(run.code, describeRun(run)).toBe(0);
        return run.stdout.trim().split('\n');
      };
      const registry = new TeamRegistry(root);
      const statuses = () => registry.members().map((member) => `${member.status} ${member.reason ?? ''}`.trim());
      // Each idles out a second after its own idle: on a busy machine the first may rest before the last is idle.
      await until(() => statuses().length === 3 && statuses().every((status) => status === 'idle looking for work' || status === 'shutdown idle for 1 s'), 'three teammates idle or resting');
      const started = await team();
      expect(started[0]).toMatch(new RegExp(`^team ${path.basename(root)} — lead lead: pid ${lead.pid} on .+, since \\d{4}-`));
      // Idle as /team says it, or already idled out: a second passes quickly on a busy machine.
      for (const [i, role] of ['analyst', 'engineer', 'reviewer'].entries()) {
        expect(started.slice(1).sort()[i]).toMatch(new RegExp(`^  ${role} \\(${role}\\): (idle — looking for work|shutdown — idle for 1 s)$`));
      }
      // Idled out (the lead starts them again for work): as recorded, with the reason.
      await until(() => statuses().every((status) => status === 'shutdown idle for 1 s'), 'three teammates idled out');
      const rested = await team();
      expect(rested.slice(1).sort()).toEqual(['  analyst (analyst): shutdown — idle for 1 s', '  engineer (engineer): shutdown — idle for 1 s', '  reviewer (reviewer): shutdown — idle for 1 s']);
    } finally {
      await lead.stop('SIGTERM');
    }
    // No lead now: its teammates shut down with it.
    const after = await runCli(['team', '--dir', root], { cwd: root });
    expect(after.stdout.split('\n')[0]).toBe(`team ${path.basename(root)} — no lead running`);
    expect(after.stdout).toMatch(/^ {2}analyst \(analyst\): shutdown/m);
    // A worker killed outright (no lead runs to reap it): its record still says idle.
    const board = fileBoard(root);
    await board.registry.join('worker-1', 'engineer', { status: 'idle', pid: 2 ** 22 + 17 });
    await board.close();
    const gone = await runCli(['team', '--dir', root], { cwd: root });
    expect(gone.stdout).toContain(`  worker-1 (engineer): idle (not running: pid ${2 ** 22 + 17} is not running)`);
    const json = await runCli(['team', '--json', '--dir', root], { cwd: root });
    expect(JSON.parse(json.stdout)).toMatchObject({ team: path.basename(root), lead: 'lead', members: expect.arrayContaining([expect.objectContaining({ name: 'worker-1', role: 'engineer', status: 'idle' })]) });
  });

  it('on a board with no team says so, and --json prints null', async () => {
    const root = tempBoard();
    roots.push(root);
    const run = await runCli(['team', '--dir', root], { cwd: root });
    expect([run.code, run.stdout.trim()]).toEqual([0, `No team (no .team/config.json in ${root}).`]);
    const json = await runCli(['team', '--json', '--dir', root], { cwd: root });
    expect([json.code, json.stdout.trim()]).toEqual([0, 'null']);
  });
});

/**
 * One live lead per board, unique live names, and members whose process is gone: real CLI
 * processes against a board a LeadSession in this process leads.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { goneReason, LeadLease } from '../../src/core/board/liveness.js';
import { TaskBoard } from '../../src/core/board/task-board.js';
import { TeamRegistry } from '../../src/core/board/team-registry.js';
import { LeadSession } from '../../src/core/lead/session.js';
import { until } from '../helpers/agent-wait.js';
import { cliEntry, DOWNLOADS_REQUIREMENT, describeRun, runCli } from '../helpers/pipeline-cli.js';

const roots: string[] = [];
const sessions: LeadSession[] = [];
const children: ChildProcess[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  for (const session of sessions.splice(0)) await session.close(1_000).catch(() => undefined);
  for (const root of roots.splice(0)) fs.rmSync(root, { recursive: true, force: true });
});

function board(): string {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-live-')));
  roots.push(root);
  return root;
}

async function lead(root: string, team = true): Promise<LeadSession> {
  const session = new LeadSession({ rootDir: root, model: { kind: 'offline', reason: 'test' }, settings: { pollMs: 100 } });
  sessions.push(session);
  await session.start(team ? undefined : []);
  return session;
}

/** A pid that surely belongs to no running process: one that just exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(child.stdout);
}

function worker(root: string, name: string, role = 'engineer'): { proc: ChildProcess; output: () => string } {
  const proc = spawn(process.execPath, [cliEntry, 'worker', '--name', name, '--role', role, '--dir', root], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', POLL_INTERVAL: '100ms', IDLE_TIMEOUT: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(proc);
  let output = '';
  proc.stdout!.on('data', (chunk) => (output += String(chunk)));
  proc.stderr!.on('data', (chunk) => (output += String(chunk)));
  return { proc, output: () => output };
}

describe('one live lead per board', () => {
  it('a second run on a live board exits 2 with one line naming the holder and how to join, touching nothing', async () => {
    const root = board();
    const first = await lead(root, false);
    const task = await first.post('Write a greeting program.');
    const before = fs.readFileSync(path.join(root, '.tasks', `task_${task.id}.json`), 'utf8');
    const second = await runCli(['run', '--auto', '--dir', root, DOWNLOADS_REQUIREMENT], { cwd: root });
    expect(second.code, describeRun(second)).toBe(2);
    expect(second.stderr.trim()).toBe(
      `autoteam: the board in ${root} already has a live lead (pid ${process.pid} on ${os.hostname()}, since ${new LeadLease(root).read()!.startedAt}); ` +
        `give it a requirement with: autoteam post --dir ${root} "<requirement>"; join its team with: autoteam worker --dir ${root} --role <role>`,
    );
    // Only that line: neither the heading of a run that never started nor the board's past events.
    expect(second.stdout).toBe('');
    expect(new TaskBoard(root).list()).toHaveLength(1);
    expect(fs.readFileSync(path.join(root, '.tasks', `task_${task.id}.json`), 'utf8')).toBe(before);
  });

  it('a second REPL without a terminal (line mode) on a live board says only the refusal: no header of a session that never started', async () => {
    const root = board();
    await lead(root, false);
    const second = await runCli(['--auto', '--dir', root], { cwd: root, input: 'Write a greeting program.\n' });
    expect(second.code, describeRun(second)).toBe(2);
    expect(second.stderr.trim()).toMatch(new RegExp(`^autoteam: the board in ${root.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} already has a live lead \\(pid ${process.pid} on `));
    expect(second.stdout).toBe('');
    expect(new TaskBoard(root).list()).toHaveLength(0);
  });

  it('mcp serve --team on a live board says so, and that serving it without --team works through that lead', async () => {
    const root = board();
    await lead(root, false);
    const served = await runCli(['mcp', 'serve', '--team', '--dir', root], { cwd: root });
    expect(served.code, describeRun(served)).toBe(2);
    expect(served.stderr.trim()).toMatch(/^autoteam: the board in .* already has a live lead \(.*\); give it a requirement with: autoteam post --dir .*; or serve it without --team \(autoteam mcp serve\): the tools then work through that lead's team$/);
  });

  it('takes over a lease whose holder is gone, and says so', async () => {
    const root = board();
    fs.mkdirSync(path.join(root, '.team'), { recursive: true });
    const pid = deadPid();
    const at = new Date().toISOString();
    fs.writeFileSync(path.join(root, '.team', 'lead.json'), JSON.stringify({ pid, host: os.hostname(), session: 'old', startedAt: at, heartbeat: at }));
    // A requirement the offline team declines: the run is short, and ends as any run does.
    const run = await runCli(['run', '--auto', '--dir', root, 'Organize my music playlist.'], { cwd: root });
    expect(run.code, describeRun(run)).toBe(1);
    expect(run.stdout).toContain('pipeline #1: FAILED — the offline model cannot implement this requirement');
    expect(run.stdout).toContain(`took over the board from a lead that is gone (pid ${pid} on ${os.hostname()}: pid ${pid} is not running)`);
    // Released when the run ended.
    expect(fs.existsSync(path.join(root, '.team', 'lead.json'))).toBe(false);
  });

  it('a lease from another host is stale once its heartbeat is older than three beats', async () => {
    const root = board();
    fs.mkdirSync(path.join(root, '.team'), { recursive: true });
    const old = new Date(Date.now() - 60_000).toISOString();
    fs.writeFileSync(path.join(root, '.team', 'lead.json'), JSON.stringify({ pid: 1, host: 'elsewhere', session: 'x', startedAt: old, heartbeat: old }));
    const lease = new LeadLease(root);
    expect(await lease.acquire()).toMatchObject({ from: { host: 'elsewhere' }, why: expect.stringMatching(/^no heartbeat for \d+ s$/) });
    await lease.release();
    const fresh = new Date().toISOString();
    fs.writeFileSync(path.join(root, '.team', 'lead.json'), JSON.stringify({ pid: 1, host: 'elsewhere', session: 'y', startedAt: fresh, heartbeat: fresh }));
    await expect(new LeadLease(root).acquire()).rejects.toMatchObject({ code: 'BOARD_BUSY' });
  });

  it("a lease that is no lease (a hand edit) is not taken over: the board may have a live lead, which writes it again; one line says what to do", async () => {
    const root = board();
    fs.mkdirSync(path.join(root, '.team'), { recursive: true });
    const file = path.join(root, '.team', 'lead.json');
    for (const broken of ['{"pid": "x"', '{"pid": "x"}']) {
      fs.writeFileSync(file, broken);
      await expect(new LeadLease(root).acquire()).rejects.toMatchObject({ code: 'BOARD_FILE_INVALID', message: expect.stringMatching(new RegExp(`^${file}: .*; a live lead writes it again within \\d+ s; if no lead runs on this board, delete it and start again$`)) });
      expect(fs.readFileSync(file, 'utf8')).toBe(broken);
    }
    // The CLI says it in one line, exit 2, and starts nothing.
    const run = await runCli(['run', '--auto', '--dir', root, DOWNLOADS_REQUIREMENT], { cwd: root });
    expect(run.code, describeRun(run)).toBe(2);
    expect(run.stderr.trim()).toBe(`autoteam: ${file}: is not a lead's lease; a live lead writes it again within 15 s; if no lead runs on this board, delete it and start again`);
    expect(new TaskBoard(root).list()).toEqual([]);
  });
});

describe('names and roles', () => {
  it('a second live teammate under a name in use is refused (exit 2); an unknown role is refused with the known ones', async () => {
    const root = board();
    await lead(root);
    await until(() => new TeamRegistry(root).get('engineer')?.status === 'idle', 'the engineer thread is idle');
    const twin = await runCli(['worker', '--name', 'engineer', '--role', 'engineer', '--dir', root], { cwd: root });
    expect(twin.code, describeRun(twin)).toBe(2);
    expect(twin.stderr).toMatch(/'engineer' is already a live member of team '.*' \(pid \d+ on .*\); choose another name/);
    const typo = await runCli(['worker', '--name', 'e2', '--role', 'enginer', '--dir', root], { cwd: root });
    expect(typo.code).toBe(2);
    expect(typo.stderr.trim()).toBe("autoteam: unknown role 'enginer' — did you mean engineer? (roles: analyst, engineer, reviewer, any)");
    const long = await runCli(['worker', '--name', 'x'.repeat(300), '--role', 'engineer', '--dir', root], { cwd: root });
    expect(long.code).toBe(2);
    expect(long.stderr).toMatch(/invalid teammate name 'x{80}…': name: at most 64 characters/);
  });

  it('the session refuses /spawn of an unknown role, of the lead\'s name, of a live name, of one that differs from a teammate\'s only in case', async () => {
    const root = board();
    const session = await lead(root);
    expect(() => session.spawn('bob', 'wizard')).toThrow("unknown role 'wizard' (roles: analyst, engineer, reviewer, any)");
    expect(() => session.spawn('lead', 'engineer')).toThrow("'lead' is the team lead's name");
    // Refused whether or not the analyst's thread has joined the team yet.
    expect(() => session.spawn('Analyst', 'analyst')).toThrow(/'Analyst' differs from 'analyst' of team '.*' only in case/);
    await until(() => new TeamRegistry(root).get('analyst')?.status === 'idle', 'the analyst thread is idle');
    const other = worker(root, 'e2');
    await until(() => /idle/.test(other.output()), 'the e2 worker is idle');
    expect(() => session.spawn('e2', 'engineer')).toThrow(/'e2' is already a live member of team '.*' \(pid \d+/);
  });
});

describe('a team started with a name taken', () => {
  it('leaves that member out with one notice and starts the rest of its role', async () => {
    const root = board();
    const other = worker(root, 'engineer-2');
    await until(() => /idle/.test(other.output()), 'the engineer-2 worker is idle');
    const session = new LeadSession({ rootDir: root, model: { kind: 'offline', reason: 'test' }, settings: { pollMs: 100 } });
    sessions.push(session);
    const notices: string[] = [];
    session.subscribe((event) => {
      if (event.type === 'notice') notices.push(event.text);
    });
    await session.start(['engineer', 'engineer-2', 'engineer-3'].map((name) => ({ name, role: 'engineer' })));
    const registry = new TeamRegistry(root);
    await until(() => registry.get('engineer')?.status === 'idle' && registry.get('engineer-3')?.status === 'idle', 'engineer and engineer-3 idle');
    expect(notices.filter((text) => text.startsWith('engineer-2 '))).toEqual([expect.stringMatching(/^engineer-2 not started: 'engineer-2' is already a live member of team '.*' \(pid \d+/)]);
    expect(registry.get('engineer-2')).toMatchObject({ pid: other.proc.pid });
    expect(registry.get('engineer-3')).toMatchObject({ pid: process.pid });
  });

  it('leaves out a member whose name differs from another one of the same start only in case', async () => {
    const root = board();
    const session = new LeadSession({ rootDir: root, model: { kind: 'offline', reason: 'test' }, settings: { pollMs: 100 } });
    sessions.push(session);
    const notices: string[] = [];
    session.subscribe((event) => {
      if (event.type === 'notice') notices.push(event.text);
    });
    await session.start([{ name: 'eng', role: 'engineer' }, { name: 'Eng', role: 'engineer' }]);
    const registry = new TeamRegistry(root);
    await until(() => registry.get('eng')?.status === 'idle', 'eng idle');
    expect(notices.filter((text) => text.startsWith('Eng '))).toEqual([expect.stringMatching(/^Eng not started: 'Eng' differs from 'eng' of team '.*' only in case/)]);
    expect(registry.members().map((member) => member.name)).toEqual(['eng']);
  });
});

describe('members whose process is gone', () => {
  it('a SIGKILLed worker is marked dead and its task handed back at once, not after the lease', async () => {
    const root = board();
    await lead(root, false);
    const registry = new TeamRegistry(root);
    const tasks = new TaskBoard(root);
    const task = await tasks.create({ subject: 'run `sleep 20`', role: 'engineer' });
    const claimer = worker(root, 'e9');
    await until(() => tasks.get(task.id).status === 'in_progress' && tasks.get(task.id).owner === 'e9', 'e9 is working the task');
    claimer.proc.kill('SIGKILL');
    await until(() => tasks.get(task.id).status === 'pending', 'the task handed back').catch((error: Error) => {
      throw new Error(`${error.message}\nmember: ${JSON.stringify(registry.get('e9'))}\ntask: ${JSON.stringify(tasks.get(task.id).history)}\n${claimer.output()}`);
    });
    // Handed back because the lead saw the process gone, not because the lease ran out.
    expect(registry.get('e9')).toMatchObject({ status: 'dead', reason: expect.stringMatching(/^pid \d+ is not running$/) });
    expect(tasks.get(task.id).history.at(-1)).toMatchObject({ event: 'released', detail: expect.stringMatching(/^e9 is dead \(pid \d+ is not running\)$/) });
    expect(tasks.get(task.id).history.some((entry) => /lease/.test(entry.detail ?? ''))).toBe(false);
    // The death is in the board's log, as a thread's is: `autoteam events` and the web board show it.
    const logged = () => fs.readFileSync(path.join(root, '.team', 'events.jsonl'), 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as { type: string; agent?: string; reason?: string });
    const dead = await until(() => logged().find((event) => event.type === 'teammate_dead' && event.agent === 'e9'), 'teammate_dead for e9 in the log');
    expect(dead.reason).toMatch(/^pid \d+ is not running$/);
  });

  it('a member missing from a rewritten config is listed again by its heartbeat, so its name stays taken', async () => {
    const root = board();
    const registry = new TeamRegistry(root);
    await registry.join('analyst', 'analyst', { status: 'waiting' });
    fs.rmSync(path.join(root, '.team', 'config.json'));
    await registry.join('engineer', 'engineer');
    await registry.heartbeat('analyst', { name: 'analyst', role: 'analyst', status: 'waiting', task: 3, pid: process.pid });
    expect(registry.get('analyst')).toMatchObject({ status: 'waiting', task: 3, pid: process.pid, host: os.hostname() });
    const other = await runCli(['worker', '--name', 'analyst', '--role', 'analyst', '--dir', root], { cwd: root });
    expect(other.code).toBe(2);
    expect(other.stderr).toMatch(/'analyst' is already a live member/);
  });

  it('a deleted team config is recreated by the next member that needs it', async () => {
    const root = board();
    const w = worker(root, 'e3');
    const config = path.join(root, '.team', 'config.json');
    await until(() => /idle/.test(w.output()) && fs.existsSync(config), 'e3 joined');
    fs.rmSync(config);
    // A command in backticks: a general task the offline model really does (it fails any other honestly).
    const task = await new TaskBoard(root).create({ subject: 'write the release notes: run `echo 1.0 > NOTES.txt`', role: 'engineer' });
    await until(() => new TaskBoard(root).get(task.id).status === 'completed', 'e3 completed the task').catch((error: Error) => {
      throw new Error(`${error.message}\n${w.output()}`);
    });
    expect(new TeamRegistry(root).get('e3')).toMatchObject({ role: 'engineer' });
  });
});

describe('goneReason', () => {
  it('counts a recent silence in seconds, and names when a long-gone holder last beat', () => {
    const now = Date.parse('2026-12-01T12:00:00.000Z');
    const beat = (ago: number) => ({ pid: 4242, host: 'elsewhere', heartbeat: new Date(now - ago).toISOString() });
    expect(goneReason(beat(1_000), now)).toBeNull();
    expect(goneReason(beat(40_000), now)).toBe('no heartbeat for 40 s');
    expect(goneReason(beat(3 * 86_400_000), now)).toBe('no heartbeat since 2026-11-28T12:00:00.000Z');
  });
});

import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { boardOf, waitUntil } from '../helpers/repl-session.js';
import { fileBoard } from '../../src/core/board/board.js';
import { runLine } from '../../src/frontend/commands.js';
import { formatMember } from '../../src/frontend/format.js';
import { type LeadEvent, LeadSession } from '../../src/core/lead/session.js';
import { stateOf } from '../../src/web/views.js';
import { HANG_MS } from '../helpers/agent-wait.js';

const roots: string[] = [];
const sessions: LeadSession[] = [];

afterEach(async () => {
  for (const session of sessions.splice(0)) await session.close(1_000).catch(() => undefined);
  for (const root of roots.splice(0)) fs.rmSync(root, { recursive: true, force: true });
});

function waitFor(session: LeadSession, match: (event: LeadEvent) => boolean, ms = HANG_MS): Promise<LeadEvent> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('timed out waiting for a session event')), ms);
    const onEvent = (event: LeadEvent) => {
      if (!match(event)) return;
      clearTimeout(timer);
      session.off('event', onEvent);
      resolve(event);
    };
    session.on('event', onEvent);
  });
}

/** A session whose teammates idle out after 300 ms (they rest, and are started again for work or mail), and the names that left. */
function idlingSession(): { session: LeadSession; exited: Set<string> } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-session-'));
  roots.push(root);
  const session = new LeadSession({ rootDir: root, model: { kind: 'offline', reason: 'test' }, auto: true, settings: { idleTimeoutMs: 300, pollMs: 100 } });
  sessions.push(session);
  const exited = new Set<string>();
  session.on('event', (event) => {
    if (event.type === 'teammate_exit') exited.add(event.exit.name);
  });
  return { session, exited };
}

describe('LeadSession', () => {
  it('respawns teammates that idled out once work for their role is posted', async () => {
    const { session, exited } = idlingSession();
    await session.start();
    await waitFor(session, () => exited.size === 3);
    expect(session.running()).toEqual([]);

    const task = await session.post('Write a Python script that organizes my Downloads folder by file type.');
    const state = await session.waitForPipeline(task.pipeline!, AbortSignal.timeout(HANG_MS));
    expect(state.status).toBe('approved');
    expect(new Set(state.tasks.map((t) => t.owner))).toEqual(new Set(['analyst', 'engineer', 'reviewer']));
    // Every model call the threads made was reported: the session's spend matches the board's usage.
    const calls = state.tasks.reduce((sum, t) => sum + t.usage.calls, 0);
    expect(['analyst', 'engineer', 'reviewer'].reduce((sum, name) => sum + (session.snapshot().spend.members[name]?.calls ?? 0), 0)).toBe(calls);
    expect(session.snapshot().spend.total.inputTokens).toBe(state.tasks.reduce((sum, t) => sum + t.usage.inputTokens, 0));
  });

  it('starts a teammate that idled out again at once for a message, so /msg says it was sent to a running teammate', async () => {
    const { session, exited } = idlingSession();
    await session.start([{ name: 'analyst', role: 'analyst' }]);
    await waitFor(session, () => exited.has('analyst'));
    expect(session.isRunning('analyst')).toBe(false);
    const out: string[] = [];
    await runLine('/msg analyst Keep the questions short.', { session, print: (text) => out.push(text), askLead: (text) => session.ask(text) });
    expect(out).toEqual(['sent to analyst']);
    expect(session.isRunning('analyst')).toBe(true);
  });

  it('keeps a teammate that idled out down once /shutdown names it: work of its role waits, said once', async () => {
    const { session, exited } = idlingSession();
    await session.start([{ name: 'analyst', role: 'analyst' }]);
    await waitFor(session, () => exited.has('analyst'));
    // Resting, not gone: /team and the panel say so (the registry says shutdown).
    await waitUntil(() => session.snapshot().team.members.some((member) => member.name === 'analyst' && member.status === 'shutdown'), 'the registry to say the analyst shut down');
    expect(session.snapshot().team.members.find((member) => member.name === 'analyst')).toMatchObject({ status: 'shutdown', resting: true });
    expect(formatMember(session.snapshot().team.members.find((member) => member.name === 'analyst')!)).toMatch(/^analyst \(analyst\): resting — idle for /);
    // And the web board's Team page.
    expect(stateOf(session.snapshot(), session, null).team.members.find((member) => member.name === 'analyst')).toMatchObject({ status: 'resting', alive: false });
    const out: string[] = [];
    await runLine('/shutdown analyst', { session, print: (text) => out.push(text), askLead: (text) => session.ask(text) });
    expect(out).toEqual(['analyst had idled out: it is not started again for work (/spawn starts it)']);
    // Kept down from now on: shut down, no longer resting, and its record says so to other processes.
    expect(session.snapshot().team.members.find((member) => member.name === 'analyst')).not.toHaveProperty('resting');
    expect(boardOf(session).registry.get('analyst')).toMatchObject({ status: 'shutdown', reason: 'kept down by the lead: not started again for work' });
    const waits = waitFor(session, (e) => e.type === 'notice' && /waits: task #\d+ \(requirements\) is for a teammate of role analyst, and none runs/.test(e.text));
    await boardOf(session).tasks.create({ subject: 'Analyse: a thing', role: 'analyst', stage: 'requirements', pipeline: 1 });
    await waits;
    expect(session.isRunning('analyst')).toBe(false);
    expect(session.busyReason()).toBeNull();
  });

  it('counts teammates that idled out as there: a pipeline posted while all rest is still active', async () => {
    const { session, exited } = idlingSession();
    await session.start([{ name: 'analyst', role: 'analyst' }]);
    await waitFor(session, () => exited.has('analyst'));
    expect(session.isRunning('analyst')).toBe(false);
    const board = boardOf(session);
    await board.tasks.create({ subject: 'Analyse: a thing', role: 'analyst', stage: 'requirements', pipeline: 1 });
    // At once, before any watcher event has brought the analyst back: line mode's input ending now must not leave it open.
    expect(session.busyReason()).toBe('pipeline #1 still active');
  });

  it('takes a role as served by a live member of another process, and not by one whose process is gone', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-session-'));
    roots.push(root);
    const session = new LeadSession({ rootDir: root, model: { kind: 'offline', reason: 'test' }, settings: { idleTimeoutMs: 0, pollMs: 100 } });
    sessions.push(session);
    await session.start([{ name: 'analyst', role: 'analyst' }]);
    await waitFor(session, (e) => e.type === 'teammate' && e.event.type === 'status' && e.event.status === 'idle');
    const board = boardOf(session);
    await board.tasks.create({ subject: 'Implement: a thing', role: 'engineer', stage: 'implementation', pipeline: 1 });
    // No engineer anywhere: nothing here moves pipeline #1.
    expect(session.busyReason()).toBeNull();
    // An `autoteam worker` of role engineer in another process, alive: the pipeline can move.
    await board.registry.join('engineer-elsewhere', 'engineer', { status: 'idle', pid: process.pid });
    expect(session.busyReason()).toBe('pipeline #1 still active');
    // One whose process is gone (a pid that has exited), its record still saying idle: it serves nothing.
    await board.registry.setStatus('engineer-elsewhere', 'shutdown');
    await board.registry.join('engineer-gone', 'engineer', { status: 'idle', pid: spawnSync('true').pid! });
    expect(session.busyReason()).toBeNull();
  });

  it('delivers a message to a teammate of its own that is still starting, once it has joined (a script\'s first line)', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-session-'));
    roots.push(root);
    const session = new LeadSession({ rootDir: root, model: { kind: 'offline', reason: 'test' }, auto: true, settings: { idleTimeoutMs: 0, pollMs: 100 } });
    sessions.push(session);
    await session.start([{ name: 'eng', role: 'engineer' }]);
    // At once: its thread is made, and is still loading (tens of ms) before it joins the team.
    const sent = await session.message('eng', 'hello');
    expect(sent).toMatchObject({ from: 'lead', to: 'eng', content: 'hello' });
    expect(boardOf(session).registry.get('eng')).toBeDefined();
    // Anyone else is still refused at once.
    await expect(session.message('nobody', 'hello')).rejects.toThrow(/'nobody' is not a member of team/);
  });

  it('does not respawn a teammate the lead shut down', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-session-'));
    roots.push(root);
    const session = new LeadSession({ rootDir: root, model: { kind: 'offline', reason: 'test' }, auto: true, settings: { idleTimeoutMs: 0, pollMs: 100 } });
    sessions.push(session);
    await session.start([{ name: 'eng', role: 'engineer' }]);
    await waitFor(session, (e) => e.type === 'teammate' && e.event.type === 'status' && e.event.status === 'idle');
    const exit = await session.requestShutdown('eng', HANG_MS);
    expect(exit?.kind).toBe('left');
    const said = waitFor(session, (e) => e.type === 'notice');
    const task = await boardOf(session).tasks.create({ subject: 'Run `true`', role: 'engineer' });
    session.emit('event', { type: 'board' });
    // The next board event from the watcher (the new task, or the reconcile tick) is where a resting
    // teammate would be started again: the stopped one must stay stopped, and the task is said to wait.
    await waitFor(session, (e) => e.type === 'board');
    expect(await said).toEqual({ type: 'notice', text: `task #${task.id} waits: it is for a teammate of role engineer, and none runs: autoteam worker --role engineer on this board takes it` });
    expect(session.isRunning('eng')).toBe(false);
    expect(session.snapshot().tasks[0]!.status).toBe('pending');
  });
});

/** A session on a fresh board (`seed` writes to it first) whose notices are collected, started with one analyst. */
async function noticingSession(options: { repl?: boolean; seed?: (root: string) => Promise<unknown>; team?: Array<{ name: string; role: string }> } = {}) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-session-'));
  roots.push(root);
  await options.seed?.(root);
  const session = new LeadSession({ rootDir: root, model: { kind: 'offline', reason: 'test' }, auto: true, repl: options.repl ?? false, settings: { idleTimeoutMs: 0, pollMs: 100 } });
  sessions.push(session);
  const notices: string[] = [];
  session.on('event', (event) => {
    if (event.type === 'notice') notices.push(event.text);
  });
  await session.start(options.team ?? [{ name: 'ann', role: 'analyst' }]);
  return { session, notices, board: boardOf(session) };
}

describe('a pipeline task for a role nobody takes', () => {
  it('is said once, when it is posted, and not while a teammate of its role runs here or elsewhere, nor for one on the board before the session', async () => {
    // A task left on the board by an earlier session, for a role nobody takes: not this session's to say.
    const { session, notices, board } = await noticingSession({ repl: true, seed: (root) => fileBoard(root).tasks.create({ subject: 'Design: a logo', role: 'designer' }) });
    // A role a live member of another process takes: nothing to say.
    await board.registry.join('rev-elsewhere', 'reviewer', { status: 'idle', pid: process.pid });
    await board.tasks.create({ subject: 'Review: a thing', role: 'reviewer', stage: 'review', pipeline: 7 });
    // The analyst's pipeline moves on to implementation, which nobody here or elsewhere takes.
    const first = await session.post('Write a Python script that counts the words in a text file.');
    const said = await waitUntil(() => notices.find((text) => text.startsWith(`pipeline #${first.pipeline} waits`)), 'the notice');
    // Nothing said of the review task, which the member elsewhere takes (it never beats again: past
    // three missed heartbeats, 15 s, it would count as gone, and its task be said then).
    expect(notices.filter((text) => text.includes('waits:'))).toEqual([said]);
    const implementation = board.tasks.list().find((task) => task.pipeline === first.pipeline && task.stage === 'implementation')!;
    expect(said).toBe(`pipeline #${first.pipeline} waits: task #${implementation.id} (implementation) is for a teammate of role engineer, and none runs: /spawn <name> engineer, or autoteam worker --role engineer takes it`);
    // Later board changes do not say it again.
    await board.tasks.create({ subject: 'Run `true`', role: 'analyst' });
    await waitUntil(() => board.tasks.list().find((task) => task.subject === 'Run `true`')?.status === 'completed', 'the analyst done with its task');
    expect(notices.filter((text) => text.startsWith(`pipeline #${first.pipeline} waits`))).toEqual([said]);
  });

  it('is said by a session without a team of its own (--no-team), for a role no worker elsewhere takes', async () => {
    const { session, notices, board } = await noticingSession({ repl: true, team: [] });
    // An engineer of another process (this one's pid: alive) takes the engineer's stage; nobody the analyst's.
    await board.registry.join('eng-elsewhere', 'engineer', { status: 'idle', pid: process.pid });
    await board.tasks.create({ subject: 'Run `true`', role: 'engineer' });
    const first = await session.post('Write a Python script that counts the words in a text file.');
    const said = await waitUntil(() => notices.find((text) => text.startsWith(`pipeline #${first.pipeline} waits`)), 'the notice');
    expect(said).toBe(`pipeline #${first.pipeline} waits: task #${first.id} (requirements) is for a teammate of role analyst, and none runs: /spawn <name> analyst, or autoteam worker --role analyst takes it`);
    expect(notices.filter((text) => text.includes('waits:'))).toEqual([said]);
  });

  it('for a role no stage has (a task written by hand), says so instead of offering a teammate that cannot be started', async () => {
    const { notices, board } = await noticingSession({ repl: true });
    const task = await board.tasks.create({ subject: 'Test the thing', role: 'tester' });
    const said = await waitUntil(() => notices.find((text) => text.startsWith(`task #${task.id} waits`)), 'the notice');
    expect(said).toBe(`task #${task.id} waits: it is for role tester, which no stage of this team has (roles: analyst, engineer, reviewer, any): a teammate of role any takes it, or fix its role in the task file`);
  });

  it('is said again when the teammate that held it dies and it is handed back, the role now without anyone', async () => {
    const { notices, board } = await noticingSession();
    // An engineer of another process (a real one, killed below), which claims the task as it is posted.
    const elsewhere = spawn('sleep', ['60'], { stdio: 'ignore' });
    try {
      await board.registry.join('eng-elsewhere', 'engineer', { status: 'idle', pid: elsewhere.pid! });
      const task = await board.tasks.create({ subject: 'Run `true`', role: 'engineer' });
      expect(await board.tasks.claim(task.id, 'eng-elsewhere', { role: 'engineer' })).toMatchObject({ ok: true });
      elsewhere.kill('SIGKILL');
      // The lead reaps it and hands the task back: pending again, for a role nobody takes now.
      const said = await waitUntil(() => notices.find((text) => text.startsWith(`task #${task.id} waits`)), 'the notice');
      expect(said).toBe(`task #${task.id} waits: it is for a teammate of role engineer, and none runs: autoteam worker --role engineer on this board takes it`);
      expect(board.tasks.get(task.id)).toMatchObject({ status: 'pending', owner: null });
      expect(notices.filter((text) => text.includes('waits:'))).toEqual([said]);
    } finally {
      elsewhere.kill('SIGKILL');
    }
  });
});

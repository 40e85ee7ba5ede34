/**
 * The rehearsal of the board's code: once a thread, on a scratch board in the temp folder that it
 * removes; never on the real board; scheduled when a thread's first teammate sits idle, and not at
 * all once the thread has claimed real work. Then with a real worker thread: an idle teammate's
 * thread rehearses in the temp folder it was started with, and the real board never sees it.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { makeTeam, ManagerRig } from '../helpers/agent-team.js';
import { removeBoard, tempBoard } from '../helpers/agent-wait.js';
import { FAKE_MODEL_PATH } from '../helpers/fake-model.js';

type RehearsalModule = typeof import('../../src/core/agent/rehearsal.js');

/** A fresh copy of the module: its state is a thread's, and each test stands for a thread of its own. */
async function freshThread(): Promise<RehearsalModule> {
  vi.resetModules();
  return import('../../src/core/agent/rehearsal.js');
}

const savedTmp = process.env.TMPDIR;
const folders: string[] = [];
/** A temp folder of the test's own, as the system's temp folder. */
function ownTemp(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rehearsal-test-'));
  folders.push(dir);
  process.env.TMPDIR = dir;
  return dir;
}

afterEach(() => {
  vi.useRealTimers();
  if (savedTmp === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = savedTmp;
  for (const dir of folders.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

describe('rehearseBoardCode', () => {
  it('posts, claims, records, completes and hands over on a scratch board, then removes it; once a thread', async () => {
    const temp = ownTemp();
    const { rehearseBoardCode, rehearsal } = await freshThread();
    expect(rehearsal()).toBeNull();
    const first = rehearseBoardCode('engineer', 'engineer');
    // Under way: its scratch board is in the temp folder.
    expect(fs.readdirSync(temp).filter((name) => name.startsWith(`autoteam-rehearsal-${process.pid}-`))).toHaveLength(1);
    expect(await first).toBe(true);
    expect(fs.readdirSync(temp)).toEqual([]);
    // Once a thread, whoever asks.
    expect(rehearseBoardCode('engineer-2', 'engineer')).toBe(first);
    expect(rehearsal()).toBe(first);
  });

  it('a scratch board a killed process left is swept as other scratch folders are', async () => {
    const temp = ownTemp();
    const { sweepScratch } = await import('../../src/core/exec/scratch.js');
    // No process has this pid (above the kernel's pid_max): its owner is gone.
    const left = path.join(temp, 'autoteam-rehearsal-4194305-a1B2c3');
    fs.mkdirSync(path.join(left, '.tasks', '.locks'), { recursive: true });
    const mine = path.join(temp, `autoteam-rehearsal-${process.pid}-d4E5f6`);
    fs.mkdirSync(mine);
    expect(sweepScratch(temp)).toBe(1);
    expect(fs.readdirSync(temp)).toEqual([path.basename(mine)]);
  });

  it('costs nothing but the warm-up when there is no temp folder to write', async () => {
    const temp = ownTemp();
    process.env.TMPDIR = path.join(temp, 'missing', 'folder');
    const { rehearseBoardCode } = await freshThread();
    expect(await rehearseBoardCode('analyst', 'analyst')).toBe(false);
    expect(fs.readdirSync(temp)).toEqual([]);
  });
});

describe('RehearsalTimer', () => {
  it("rehearses once the thread's first teammate has sat idle for the delay, and once only", async () => {
    ownTemp();
    const { RehearsalTimer, rehearsal } = await freshThread();
    vi.useFakeTimers();
    const timer = new RehearsalTimer('reviewer', 'reviewer', 100);
    const told = (status: string, task: number | null) => timer.status(status, task);
    told('idle', null);
    vi.advanceTimersByTime(99);
    expect(rehearsal()).toBeNull();
    // A second teammate of the thread idle too: still the one timer.
    told('idle', null);
    vi.advanceTimersByTime(1);
    const begun = rehearsal();
    expect(begun).not.toBeNull();
    vi.useRealTimers();
    expect(await begun).toBe(true);
    told('idle', null);
    expect(rehearsal()).toBe(begun);
  });

  it('is put off by reading messages or a shutdown, and comes when a teammate is idle again', async () => {
    ownTemp();
    const { RehearsalTimer, rehearsal } = await freshThread();
    vi.useFakeTimers();
    const timer = new RehearsalTimer('analyst', 'analyst', 100);
    const told = (status: string, task: number | null) => timer.status(status, task);
    told('idle', null);
    vi.advanceTimersByTime(60);
    told('working', null);
    vi.advanceTimersByTime(1_000);
    expect(rehearsal()).toBeNull();
    told('idle', null);
    vi.advanceTimersByTime(60);
    // A thread stopping: no rehearsal begins while it shuts down.
    told('shutdown', null);
    vi.advanceTimersByTime(1_000);
    expect(rehearsal()).toBeNull();
    told('idle', null);
    vi.advanceTimersByTime(100);
    const begun = rehearsal();
    vi.useRealTimers();
    expect(await begun).toBe(true);
  });

  it('is put off by a wake (its claim may be under way before any status says so) until the thread has been quiet for the delay', async () => {
    ownTemp();
    const { RehearsalTimer, rehearsal } = await freshThread();
    vi.useFakeTimers();
    const timer = new RehearsalTimer('engineer', 'engineer', 100);
    timer.status('idle', null);
    vi.advanceTimersByTime(90);
    timer.woke();
    vi.advanceTimersByTime(10);
    expect(rehearsal()).toBeNull();
    // Woken, it claimed nothing (another took the task): it says `looked`, not idle, and the
    // rehearsal still comes, the delay after the wake.
    vi.advanceTimersByTime(89);
    expect(rehearsal()).toBeNull();
    vi.advanceTimersByTime(1);
    const begun = rehearsal();
    expect(begun).not.toBeNull();
    vi.useRealTimers();
    expect(await begun).toBe(true);
  });

  it('begins none once cancelled as the thread ends', async () => {
    ownTemp();
    const { RehearsalTimer, rehearsal } = await freshThread();
    vi.useFakeTimers();
    const timer = new RehearsalTimer('engineer', 'engineer', 100);
    timer.status('idle', null);
    vi.advanceTimersByTime(50);
    timer.cancel();
    vi.advanceTimersByTime(1_000);
    expect(rehearsal()).toBeNull();
  });

  it('does not rehearse a thread that claimed a task first, then or later', async () => {
    ownTemp();
    const { RehearsalTimer, rehearseBoardCode, rehearsal } = await freshThread();
    vi.useFakeTimers();
    const timer = new RehearsalTimer('analyst', 'analyst', 100);
    const told = (status: string, task: number | null) => timer.status(status, task);
    told('idle', null);
    vi.advanceTimersByTime(50);
    // Reading messages is no claim; a task is.
    told('working', null);
    vi.advanceTimersByTime(10);
    told('working', 7);
    vi.advanceTimersByTime(1_000);
    told('idle', null);
    vi.advanceTimersByTime(1_000);
    expect(rehearsal()).toBeNull();
    vi.useRealTimers();
    expect(await rehearseBoardCode('analyst', 'analyst')).toBe(false);
    expect(rehearsal()).toBeNull();
  });
});

describe('an idle teammate in a real worker thread', () => {
  let root = '';
  let rig: ManagerRig | null = null;
  afterEach(async () => {
    await rig?.close();
    rig = null;
    removeBoard(root);
  });

  it('rehearses in its temp folder, removes it, and leaves the real board as it was', { timeout: 30_000 }, async () => {
    const temp = ownTemp();
    const seen: string[] = [];
    let gone: () => void = () => undefined;
    const removed = new Promise<void>((resolve) => (gone = resolve));
    // The scratch board comes and goes: its folder is made, then removed once the rehearsal ends.
    const watcher = fs.watch(temp, (_event, name) => {
      if (!name?.startsWith('autoteam-rehearsal-')) return;
      seen.push(name);
      if (!fs.existsSync(path.join(temp, name))) gone();
    });
    try {
      root = tempBoard();
      const { board } = await makeTeam(root);
      // The thread takes the environment it is started with: TMPDIR is the test's folder.
      rig = await ManagerRig.start(root, { kind: 'module', path: FAKE_MODEL_PATH, options: { script: 'hang' } });
      rig.manager.spawnTeam([{ name: 'eng', role: 'engineer' }]);
      await rig.events.waitFor((e) => e.type === 'status' && e.name === 'eng' && e.status === 'idle', 'eng idle');
      await removed;
      expect(seen.length).toBeGreaterThan(0);
      // The teammate's own scratch (autoteam-agent-) stays while it runs; the rehearsal's is gone.
      expect(fs.readdirSync(temp).filter((name) => name.startsWith('autoteam-rehearsal-'))).toEqual([]);
      // Nothing of it on the real board: no task, no task event.
      expect(board.list()).toEqual([]);
      const log = path.join(root, '.team', 'events.jsonl');
      const events = fs.existsSync(log) ? fs.readFileSync(log, 'utf8') : '';
      expect(events).not.toContain('rehearsal');
    } finally {
      watcher.close();
    }
  });
});

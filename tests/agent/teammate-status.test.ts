import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { TeammateStatus } from '../../src/core/agent/teammate-status.js';
import type { TeammateEvent } from '../../src/core/agent/teammate-events.js';
import { withLock } from '../../src/core/board/lock.js';
import { TaskBoard } from '../../src/core/board/task-board.js';
import { TeamRegistry } from '../../src/core/board/team-registry.js';
import type { EventSink } from '../../src/core/events/emitter.js';
import type { Trace } from '../../src/core/trace/trace.js';
import { removeBoard, tempBoard } from '../helpers/agent-wait.js';

let root = '';
afterEach(() => removeBoard(root));

/** A teammate's status on a real registry, with what it tells its host. */
async function statusOf(): Promise<{ registry: TeamRegistry; status: TeammateStatus; told: TeammateEvent[] }> {
  root = tempBoard('autoteam-status-');
  const registry = new TeamRegistry(root);
  await registry.ensure('t');
  await registry.join('eng', 'engineer');
  const told: TeammateEvent[] = [];
  const quiet = { write: () => undefined, emit: () => undefined };
  const status = new TeammateStatus({ name: 'eng', role: 'engineer' }, { registry, trace: quiet as unknown as Trace, sink: quiet as unknown as EventSink, emit: (event) => told.push(event) });
  return { registry, status, told };
}

describe('TeammateStatus', () => {
  it('statuses posted without waiting land in the order posted, while another holds the registry', async () => {
    const { registry, status, told } = await statusOf();
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const locked = withLock(registry.file, () => held);
    const posted: string[] = [];
    for (let task = 1; task <= 5; task++) {
      status.post('working', task);
      status.post('idle', null);
      posted.push(`working:${task}`, 'idle:null');
    }
    // Every write has tried the lock once and is waiting for it.
    await new Promise((resolve) => setImmediate(resolve));
    release();
    await locked;
    await status.set('waiting', 6, 'asked');
    expect(told.filter((event) => event.type === 'status').map((event) => `${event.status}:${event.task}`)).toEqual([...posted, 'waiting:6']);
    expect(registry.read().members.find((member) => member.name === 'eng')).toMatchObject({ status: 'waiting', task: 6, reason: 'asked' });
  });

  it('a posted status the registry cannot take is reported, and the next status still tries', async () => {
    const { registry, status, told } = await statusOf();
    const good = fs.readFileSync(registry.file, 'utf8');
    fs.writeFileSync(registry.file, '{ "team": ');
    status.post('working', 1);
    await expect(status.set('idle', null)).rejects.toThrow(/config\.json/);
    // The host's wakes heard both at once; the registry took neither.
    expect(told.filter((event) => event.type === 'presence')).toEqual([
      { type: 'presence', name: 'eng', status: 'working' },
      { type: 'presence', name: 'eng', status: 'idle' },
    ]);
    expect(told.filter((event) => event.type !== 'presence')).toEqual([expect.objectContaining({ type: 'error', name: 'eng', error: expect.objectContaining({ message: expect.stringMatching(/config\.json.*ends early/) }) })]);
    fs.writeFileSync(registry.file, good);
    await status.set('working', 2);
    expect(registry.read().members.find((member) => member.name === 'eng')).toMatchObject({ status: 'working', task: 2 });
  });

  it('a heartbeat waits behind the queued status writes and lists the newest status; one waits at a time', async () => {
    root = tempBoard('autoteam-status-');
    const landed: string[] = [];
    let open = () => {};
    const gate = new Promise<void>((resolve) => (open = resolve));
    /** The real registry; the first status write waits at a gate, and every write says when it landed. */
    class Recording extends TeamRegistry {
      override async setStatus(...args: Parameters<TeamRegistry['setStatus']>): ReturnType<TeamRegistry['setStatus']> {
        const [, status, update] = args;
        if (landed.length === 0 && status === 'working') await gate;
        const member = await super.setStatus(...args);
        landed.push(`${status}:${update?.task ?? null}`);
        return member;
      }
      override async heartbeat(...args: Parameters<TeamRegistry['heartbeat']>): Promise<void> {
        await super.heartbeat(...args);
        landed.push(`beat ${args[1]?.status}:${args[1]?.task}`);
      }
    }
    const registry = new Recording(root);
    await registry.ensure('t');
    await registry.join('eng', 'engineer');
    const quiet = { write: () => undefined, emit: () => undefined };
    const status = new TeammateStatus({ name: 'eng', role: 'engineer' }, { registry, trace: quiet as unknown as Trace, sink: quiet as unknown as EventSink, emit: () => undefined });
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    try {
      status.post('working', 1);
      status.post('idle', null);
      const stop = status.beat(10);
      // Five beats come due while the first write waits.
      vi.advanceTimersByTime(50);
      open();
      await status.set('working', 2);
      stop();
    } finally {
      vi.useRealTimers();
    }
    await new Promise((resolve) => setImmediate(resolve));
    // The beat's turn came after working:2 was set: it lists that, never the idle the queue had passed.
    expect(landed).toEqual(['working:1', 'idle:null', 'beat working:2', 'working:2']);
    expect(registry.read().members.find((member) => member.name === 'eng')).toMatchObject({ status: 'working', task: 2 });
  });

  /** Task #1 claimed by eng, and eng's record rewritten as `record` says (another process's, or this one's). */
  async function heldUnder(record: { pid: number; host: string; heartbeatAgoMs: number }) {
    const { registry, status } = await statusOf();
    const board = new TaskBoard(root);
    const task = await board.create({ subject: 'Held', role: 'engineer' });
    expect((await board.claim(task.id, 'eng', { role: 'engineer' })).ok).toBe(true);
    const file = path.join(root, '.team', 'config.json');
    const config = JSON.parse(fs.readFileSync(file, 'utf8')) as { members: Array<Record<string, unknown>> };
    const eng = config.members.find((member) => member.name === 'eng')!;
    Object.assign(eng, { status: 'working', task: task.id, pid: record.pid, host: record.host, heartbeat: new Date(Date.now() - record.heartbeatAgoMs).toISOString() });
    fs.writeFileSync(file, JSON.stringify(config, null, 2));
    return { registry, status, board, task };
  }

  it('joining hands back the tasks of a run of its name that is gone, on this host or another with the same pid', async () => {
    const { status, board, task } = await heldUnder({ pid: process.pid, host: 'container-b', heartbeatAgoMs: 60_000 });
    await status.join(board);
    expect(board.get(task.id)).toMatchObject({ status: 'pending', owner: null });
    expect(board.get(task.id).history.at(-1)).toMatchObject({ event: 'released', detail: `owner eng (pid ${process.pid} on container-b) is gone: eng joined again` });
  });

  it("joining keeps the tasks of its own process's record (a thread of the lead started again)", async () => {
    const { status, board, task, registry } = await heldUnder({ pid: process.pid, host: os.hostname(), heartbeatAgoMs: 0 });
    await status.join(board);
    expect(board.get(task.id)).toMatchObject({ status: 'in_progress', owner: 'eng' });
    expect(registry.read().members.find((member) => member.name === 'eng')).toMatchObject({ status: 'idle', pid: process.pid });
  });
});

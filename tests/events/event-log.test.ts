/**
 * The board's one ordered event log, on both backends: appends from several processes get one
 * contiguous sequence (each process's events in its own order), readers filter by seq, time and
 * pipeline, followers see later appends from other processes in order, and secrets never reach it.
 * The file log rotates past its size and keeps a bounded number of files.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { Board } from '../../src/core/board/board.js';
import { FileEventLog } from '../../src/core/events/file-log.js';
import type { TeamEvent } from '../../src/core/events/schema.js';
import { boardBackends } from '../helpers/board-backends.js';
import { usePostgres } from '../helpers/postgres.js';

usePostgres();

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '..', '..');
const APPENDER = path.join(repoRoot, 'tests', 'helpers', 'event-appender.ts');

const { dir, backends, open: openAt } = boardBackends('autoteam-events-');



function open(location: string, rootDir: string): Promise<Board> {
  return openAt(location, { rootDir });
}

function idle(agent: string, reason: string, extra: Partial<TeamEvent> = {}): TeamEvent {
  return { type: 'teammate_idle', ts: new Date().toISOString(), team: 't', agent, reason, ...extra } as TeamEvent;
}

function appendFrom(location: string, rootDir: string, agent: string, count: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', APPENDER, location, rootDir, agent, String(count)], { cwd: repoRoot, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (chunk) => (stderr += String(chunk)));
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`appender ${agent} exited ${code}: ${stderr}`))));
  });
}

describe.each(backends)('the event log on the $name', (backend) => {
  it('numbers appends from three processes as one contiguous sequence, each process in its own order', async () => {
    const location = await backend.location();
    const root = dir();
    const board = await open(location, root);
    await Promise.all(['a', 'b', 'c'].map((agent) => appendFrom(location, root, agent, 40)));
    const events = await board.log.read();
    expect(events.map((event) => event.seq)).toEqual(Array.from({ length: 120 }, (_, i) => i + 1));
    for (const agent of ['a', 'b', 'c']) {
      const own = events.filter((event) => event.agent === agent).map((event) => (event as { reason?: string }).reason);
      expect(own).toEqual(Array.from({ length: 40 }, (_, i) => `${agent} ${i + 1}`));
    }
  }, 120_000);

  it('filters by seq, time and pipeline; a limit keeps the newest', async () => {
    const board = await open(await backend.location(), dir());
    const early = '2026-01-01T00:00:00.000Z';
    await board.log.append([idle('x', 'old', { ts: early }), idle('x', 'one', { pipeline: 1 }), idle('x', 'two', { pipeline: 2 }), idle('x', 'three', { pipeline: 1 })]);
    const reasons = (events: TeamEvent[]) => events.map((event) => (event as { reason?: string }).reason);
    expect(reasons(await board.log.read({ since: 2 }))).toEqual(['two', 'three']);
    expect(reasons(await board.log.read({ pipeline: 1 }))).toEqual(['one', 'three']);
    expect(reasons(await board.log.read({ since: new Date('2026-06-01T00:00:00Z') }))).toEqual(['one', 'two', 'three']);
    expect(reasons(await board.log.read({}, 2))).toEqual(['two', 'three']);
    expect(reasons(await board.log.read({ types: ['teammate_dead'] }))).toEqual([]);
  });

  it('a follower sees what other processes append later, in order, from where it asked', async () => {
    const location = await backend.location();
    const root = dir();
    const board = await open(location, root);
    await board.log.append([idle('x', 'before 1'), idle('x', 'before 2')]);
    const seen: TeamEvent[] = [];
    const stop = new AbortController();
    const following = board.log.subscribe({ since: 1 }, (event) => seen.push(event), stop.signal);
    await appendFrom(location, root, 'other', 5);
    const deadline = Date.now() + 60_000;
    while (seen.length < 6 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    stop.abort();
    await following;
    expect(seen.map((event) => (event as { reason?: string }).reason)).toEqual(['before 2', 'other 1', 'other 2', 'other 3', 'other 4', 'other 5']);
    expect(seen.map((event) => event.seq)).toEqual([2, 3, 4, 5, 6, 7]);
  }, 90_000);

  it('a follower from a time with no event after it prints only what comes next, not the log before', async () => {
    const location = await backend.location();
    const root = dir();
    const board = await open(location, root);
    await board.log.append([idle('x', 'old 1', { ts: '2026-01-01T00:00:00.000Z' }), idle('x', 'old 2', { ts: '2026-01-01T00:00:01.000Z' })]);
    const seen: TeamEvent[] = [];
    const stop = new AbortController();
    const following = board.log.subscribe({ since: new Date(Date.now() - 1_000) }, (event) => seen.push(event), stop.signal);
    // Another process appends: the follower's reads after its first must not fall back to the whole log.
    await appendFrom(location, root, 'other', 2);
    const deadline = Date.now() + 60_000;
    while (seen.length < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    stop.abort();
    await following;
    expect(seen.map((event) => (event as { reason?: string }).reason)).toEqual(['other 1', 'other 2']);
  }, 90_000);

  it('never stores a secret of the environment', async () => {
    // Set before the board opens, as a key is set before autoteam starts.
    process.env.AUTOTEAM_TEST_EVENT_TOKEN = 'tok-0123456789abcdef';
    let board: Board;
    try {
      board = await open(await backend.location(), dir());
      await board.log.append([idle('x', 'the key is tok-0123456789abcdef')]);
    } finally {
      delete process.env.AUTOTEAM_TEST_EVENT_TOKEN;
    }
    const [event] = await board.log.read();
    expect((event as { reason: string }).reason).toBe('the key is [redacted]');
  });
});

describe('the file event log', () => {
  it('rotates past its size, keeps a bounded number of files, and reads and follows across rotations', async () => {
    const root = dir();
    const log = new FileEventLog(root, { maxBytes: 2_000, keep: 2, pollMs: 20 });
    const seen: number[] = [];
    const stop = new AbortController();
    const following = log.subscribe({}, (event) => seen.push(event.seq!), stop.signal);
    for (let i = 1; i <= 60; i++) {
      await log.append([idle('x', `event ${i} ${'.'.repeat(40)}`)]);
      // One event at a time, each seen before the next: the follower is never left behind a deleted file.
      const deadline = Date.now() + 30_000;
      while (!seen.includes(i) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
    }
    stop.abort();
    await following;
    const files = fs.readdirSync(path.join(root, '.team')).filter((name) => name.startsWith('events')).sort();
    expect(files).toEqual(['events.1.jsonl', 'events.2.jsonl', 'events.jsonl']);
    for (const file of files) expect(fs.statSync(path.join(root, '.team', file)).size).toBeLessThanOrEqual(2_000);
    const kept = (await log.read()).map((event) => event.seq);
    // The oldest generations are gone; what is kept is the newest, contiguous, ending at 60.
    expect(kept.at(-1)).toBe(60);
    expect(kept).toEqual(Array.from({ length: kept.length }, (_, i) => 60 - kept.length + 1 + i));
    expect(kept.length).toBeLessThan(60);
    // The follower saw every event once, in order, rotations included.
    expect(seen).toEqual(Array.from({ length: 60 }, (_, i) => i + 1));
  }, 60_000);

  it('a follower that met the file as it was made misses no line appended while it caught up', async () => {
    const root = dir();
    const writer = new FileEventLog(root);
    let reads = 0;
    /** The real log, whose catch-up read (its second) has another line appended while it runs. */
    class Racing extends FileEventLog {
      override async read(...args: Parameters<FileEventLog['read']>): ReturnType<FileEventLog['read']> {
        const events = await super.read(...args);
        if (++reads === 2) await writer.append([idle('x', 'appended during the catch-up')]);
        return events;
      }
    }
    const log = new Racing(root, { pollMs: 20 });
    const seen: number[] = [];
    const stop = new AbortController();
    // No file yet: the follower starts on nothing, then the first line makes the file.
    const following = log.subscribe({}, (event) => seen.push(event.seq!), stop.signal);
    await writer.append([idle('x', 'the first')]);
    const deadline = Date.now() + 30_000;
    while (seen.length < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
    stop.abort();
    await following;
    expect(reads).toBeGreaterThanOrEqual(2);
    expect(seen).toEqual([1, 2]);
  });

  /** What a follower of a log of three events saw after `change` (done by hand) and one event more; `change` writes that one. */
  async function followedAcross(change: (file: string, root: string) => Promise<void>): Promise<string[]> {
    const root = dir();
    const writer = new FileEventLog(root);
    for (const text of ['a', 'b', 'c']) await writer.append([idle('x', text)]);
    const log = new FileEventLog(root, { pollMs: 20 });
    const seen: string[] = [];
    const stop = new AbortController();
    const following = log.subscribe({}, (event) => seen.push(`${event.seq} ${event.type === 'teammate_idle' ? event.reason : ''}`), stop.signal);
    const deadline = Date.now() + 30_000;
    while (seen.length < 3 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
    await change(writer.file, root);
    while (seen.length < 4 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
    stop.abort();
    await following;
    return seen;
  }

  it('a follower of a log emptied by hand follows what is written after, numbered from 1 again', async () => {
    const seen = await followedAcross(async (file, root) => {
      fs.truncateSync(file, 0);
      await new FileEventLog(root).append([idle('x', 'after')]);
    });
    expect(seen).toEqual(['1 a', '2 b', '3 c', '1 after']);
  });

  it('a follower of a log replaced by hand follows the new one, numbered from 1 again', async () => {
    const seen = await followedAcross(async (file) => {
      // Another file moved over it (a new inode: a file removed and made again may get the old one back).
      const other = new FileEventLog(dir());
      await other.append([idle('x', 'after')]);
      fs.renameSync(other.file, file);
    });
    expect(seen).toEqual(['1 a', '2 b', '3 c', '1 after']);
  });

  it('skips a torn or hand-edited line and numbers on from the last good one', async () => {
    const root = dir();
    const log = new FileEventLog(root);
    await log.append([idle('x', 'a')]);
    fs.appendFileSync(log.file, 'not json\n{"seq":"x"}\n');
    await log.append([idle('x', 'b')]);
    expect((await log.read()).map((event) => event.seq)).toEqual([1, 2]);
  });

  it('numbers on from a tail another writer left: long lines, a line cut by the tail, a line with no newline yet', async () => {
    const root = dir();
    // Lines of 5 KB: the 64 KB tail a writer reads starts inside one.
    const long = (n: number) => Array.from({ length: n }, (_, i) => idle('x', `${i} ${'y'.repeat(5_000)}`));
    await new FileEventLog(root).append(long(30));
    // Another process (a log with no memory of it) appends after it.
    const other = new FileEventLog(root);
    expect((await other.append([idle('z', 'next')])).map((event) => event.seq)).toEqual([31]);
    // A writer killed mid-line left its seq: the next one does not number over it, nor writes onto that line.
    fs.appendFileSync(other.file, '{"seq":32,"type":"teammate_id');
    const next = new FileEventLog(root);
    expect((await next.append([idle('z', 'after')])).map((event) => event.seq)).toEqual([33]);
    expect((await next.read({ since: 30 })).map((event) => [event.seq, event.type === 'teammate_idle' ? event.reason : ''])).toEqual([
      [31, 'next'],
      [33, 'after'],
    ]);
  });
});

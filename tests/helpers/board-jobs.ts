import { TaskBoard, TeamRegistry, withLock } from '../../src/core/board/index.js';
import fs from 'node:fs';
import os from 'node:os';
import { openBoard } from '../../src/core/board/board.js';
import { openTaskStore } from '../../src/core/board/open.js';
import { isPostgresUrl } from '../../src/core/board/pg/connection.js';

/** What a test actor (worker thread or child process) does; plain data so it crosses postMessage/argv. */
export type BoardJob =
  | { kind: 'claim'; root: string; owners: string[]; mode: 'next' | 'direct'; ids?: number[] }
  | { kind: 'create'; root: string; count: number; by: string }
  | { kind: 'send'; root: string; from: string; to: string; count: number }
  /** Drains until `stopFile` exists and a drain comes back empty (the test writes it once every send is done). */
  | { kind: 'drain'; root: string; name: string; stopFile: string }
  | { kind: 'hold-lock'; file: string; staleMs: number }
  | { kind: 'team'; root: string; name: string; role: string; rounds: number };

export interface ClaimReport {
  /** owner → ids that owner got `ok` for. */
  claimed: Record<string, number[]>;
  errors: string[];
}

/** Lets a job tell its parent something before it finishes (e.g. "locked"). */
export type Notify = (name: string, data?: unknown) => void;

export async function runBoardJob(job: BoardJob, notify: Notify): Promise<unknown> {
  switch (job.kind) {
    case 'claim':
      return claimJob(job);
    case 'create': {
      const board = new TaskBoard(job.root);
      const ids: number[] = [];
      for (let i = 0; i < job.count; i++) {
        ids.push((await board.create({ subject: `${job.by} #${i}`, by: job.by })).id);
      }
      return ids;
    }
    case 'send': {
      // `root` is a board location: a directory, or a postgres:// URL.
      const board = await openBoard(job.root, isPostgresUrl(job.root) ? os.tmpdir() : job.root, { poolSize: 2 });
      try {
        for (let i = 0; i < job.count; i++) await board.mailbox.send(job.from, job.to, `${job.from}:${i}`);
      } finally {
        await board.close();
      }
      return job.count;
    }
    case 'drain': {
      const board = await openBoard(job.root, isPostgresUrl(job.root) ? os.tmpdir() : job.root, { poolSize: 2 });
      const got: string[] = [];
      try {
        for (;;) {
          // Checked before the drain: an empty drain after the stop file appeared leaves nothing behind.
          const stopping = fs.existsSync(job.stopFile);
          const messages = await board.mailbox.drain(job.name);
          got.push(...messages.map((m) => m.content));
          if (stopping && messages.length === 0) break;
          await new Promise((resolve) => setImmediate(resolve));
        }
      } finally {
        await board.close();
      }
      return got;
    }
    case 'hold-lock':
      // Holds the lock until the process is killed.
      return withLock(
        job.file,
        () =>
          new Promise<never>(() => {
            notify('locked');
            setInterval(() => {}, 60_000);
          }),
        { staleMs: job.staleMs },
      );
    case 'team': {
      const registry = new TeamRegistry(job.root);
      await registry.join(job.name, job.role);
      for (let round = 1; round <= job.rounds; round++) {
        await registry.setStatus(job.name, round % 2 === 0 ? 'idle' : 'working', { task: round });
      }
      return registry.get(job.name);
    }
  }
}

/**
 * Opens what a job needs before the racers are released together (board-actor.ts waits for `go`
 * after this): a claim job's boards, each with the board read once, so that a process the machine
 * is slow to schedule has not to open and read 300 task files while the others already claim.
 */
export async function prepareBoardJob(job: BoardJob, notify: Notify): Promise<() => Promise<unknown>> {
  if (job.kind !== 'claim') return () => runBoardJob(job, notify);
  const boards = await Promise.all(
    job.owners.map(async (owner) => {
      // `root` is a board location: a directory, or a postgres:// URL.
      const board = await openTaskStore(job.root, { poolSize: 2 });
      await board.list();
      return [owner, board] as const;
    }),
  );
  return () => claimJob(job, new Map(boards));
}

async function claimJob(job: Extract<BoardJob, { kind: 'claim' }>, opened = new Map<string, Awaited<ReturnType<typeof openTaskStore>>>()): Promise<ClaimReport> {
  const claimed: Record<string, number[]> = {};
  const errors: string[] = [];
  await Promise.all(
    job.owners.map(async (owner) => {
      // `root` is a board location: a directory, or a postgres:// URL.
      const board = opened.get(owner) ?? (await openTaskStore(job.root, { poolSize: 2 }));
      const mine: number[] = (claimed[owner] = []);
      try {
        if (job.mode === 'next') {
          for (;;) {
            const result = await board.claimNext(owner);
            if (!result) break;
            if (result.ok) {
              if (result.task.owner !== owner) errors.push(`${owner}: ok result names ${result.task.owner}`);
              mine.push(result.task.id);
            }
          }
        } else {
          for (const id of shuffle(job.ids ?? [])) {
            const result = await board.claim(id, owner);
            if (result.ok) mine.push(id);
          }
        }
      } catch (error) {
        errors.push(`${owner}: ${(error as Error).message}`);
      } finally {
        await board.close?.();
      }
    }),
  );
  return { claimed, errors };
}

function shuffle<T>(items: T[]): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy;
}

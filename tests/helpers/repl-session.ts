import fs from 'node:fs';
import path from 'node:path';
import { type Board, fileBoard } from '../../src/core/board/board.js';
import type { Task } from '../../src/core/board/schemas.js';
import { afterEach } from 'vitest';
import { LeadSession, type PendingQuestion } from '../../src/core/lead/session.js';
import type { LeadSessionOptions } from '../../src/core/lead/session-types.js';
import { HANG_MS } from './agent-wait.js';
import { tempDir } from './temp-dirs.js';

/** Polls `check` until it returns a truthy value or the deadline passes (no fixed sleeps). */
export async function waitUntil<T>(check: () => T | Promise<T>, what: string, timeoutMs = HANG_MS): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

export function tempBoard(prefix = 'autoteam-repl-'): string {
  return tempDir(prefix);
}

/**
 * Temp boards (real paths) and the sessions made on them, each session closed and each board removed
 * after every test of the file that calls this at its top.
 */
export function sessionsOnTempBoards(prefix: string): { board(): string; session(options: LeadSessionOptions): LeadSession } {
  const roots: string[] = [];
  const sessions: LeadSession[] = [];
  afterEach(async () => {
    for (const session of sessions.splice(0)) await session.close(1_000).catch(() => undefined);
    for (const root of roots.splice(0)) fs.rmSync(root, { recursive: true, force: true });
  });
  return {
    board: () => {
      const root = fs.realpathSync(tempBoard(prefix));
      roots.push(root);
      return root;
    },
    session: (options) => {
      const session = new LeadSession(options);
      sessions.push(session);
      return session;
    },
  };
}

/** A started session on a temp board with the offline model and no teammate threads. */
export async function quietSession(options: { auto?: boolean } = {}): Promise<LeadSession> {
  const session = new LeadSession({ rootDir: tempBoard(), model: { kind: 'offline', reason: 'test' }, auto: options.auto ?? false });
  await session.start([]);
  return session;
}

/**
 * The file board a session works on, as another process (a teammate) opens it: what a test does as
 * the team goes through it, never through the session.
 */
export function boardOf(session: LeadSession): Board {
  return fileBoard(session.rootDir);
}

/** Puts a question from `from` in the lead's inbox (as the analyst's tool does) and waits until the session holds it. */
export async function askLead(session: LeadSession, from: string, question: string, task: number | null = null): Promise<PendingQuestion> {
  if (!boardOf(session).registry.get(from)) await boardOf(session).registry.join(from, 'analyst');
  const sent = await boardOf(session).mailbox.send(from, session.lead, question, 'question', { questionId: `q-${from}-${Date.now()}`, task });
  session.drainInbox();
  return waitUntil(() => session.pendingQuestions().find((q) => q.questionId === String(sent.questionId)), `question from ${from}`);
}

/** Reads the board files the way a person would. */
export function readTasks(dir: string): Task[] {
  const folder = path.join(dir, '.tasks');
  return fs
    .readdirSync(folder)
    .filter((name) => /^task_\d+\.json$/.test(name))
    .map((name) => JSON.parse(fs.readFileSync(path.join(folder, name), 'utf8')) as Task)
    .sort((a, b) => a.id - b.id);
}

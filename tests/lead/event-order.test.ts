import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Message } from '../../src/core/board/schemas.js';
import { HeldMessages } from '../../src/core/lead/held-messages.js';
import { LeadSession, type TeamMemberSpec } from '../../src/core/lead/session.js';
import { describeEvent } from '../../src/frontend/activity.js';
import { boardOf, tempBoard, waitUntil } from '../helpers/repl-session.js';

/**
 * A teammate's lines reach the lead over its thread's port, its questions and pipeline updates
 * through the lead's inbox. A lead whose main thread is busy (an ink render) when both arrive must
 * still show them in the order they happened.
 */

const sessions: LeadSession[] = [];
const roots: string[] = [];

afterEach(async () => {
  for (const session of sessions.splice(0)) await session.close(1_000).catch(() => undefined);
  for (const root of roots.splice(0)) fs.rmSync(root, { recursive: true, force: true });
});

async function started(team: TeamMemberSpec[]): Promise<{ session: LeadSession; lines: string[] }> {
  const root = tempBoard('autoteam-order-');
  roots.push(root);
  const session = new LeadSession({ rootDir: root, model: { kind: 'offline', reason: 'test' }, settings: { pollMs: 50 } });
  sessions.push(session);
  const lines: string[] = [];
  session.on('event', (event) => {
    const line = describeEvent(event);
    if (line) lines.push(line.text);
  });
  await session.start(team);
  await waitUntil(() => team.every(({ name }) => boardOf(session).registry.get(name)?.status === 'idle'), 'the team to be idle');
  return { session, lines };
}

/** The lead's main thread kept busy (as by a long render) until its inbox holds a message of `type`. */
function busyUntilInboxHas(session: LeadSession, type: Message['type'], timeoutMs = 60_000): void {
  const file = path.join(session.rootDir, '.team', 'inbox', `${session.lead}.jsonl`);
  const cell = new Int32Array(new SharedArrayBuffer(4));
  const deadline = Date.now() + timeoutMs;
  const has = () => fs.existsSync(file) && fs.readFileSync(file, 'utf8').split('\n').some((line) => line.includes(`"type":"${type}"`));
  while (!has()) {
    if (Date.now() > deadline) throw new Error(`no ${type} in ${file} after ${timeoutMs} ms`);
    Atomics.wait(cell, 0, 0, 5);
  }
}

const indexOf = (lines: string[], pattern: RegExp) => lines.findIndex((line) => pattern.test(line));

describe('activity in causal order', () => {
  it('shows a teammate claiming a task before its question about it, even when the inbox is read first', async () => {
    const { session, lines } = await started([{ name: 'analyst', role: 'analyst' }]);
    await session.post('Write a Python script that organizes my Downloads folder by file type.');
    busyUntilInboxHas(session, 'question');
    // Read at once, before the thread's queued events: what a busy lead that wakes on the inbox does.
    session.drainInbox();
    await waitUntil(() => indexOf(lines, /^\? analyst asks \(pipeline #1\):/) >= 0 && indexOf(lines, /^\[analyst\] claimed #1/) >= 0, 'the claim and the question');
    expect(indexOf(lines, /^\[analyst\] claimed #1/)).toBeLessThan(indexOf(lines, /^\? analyst asks \(pipeline #1\):/));
    // What the model said in that turn comes before the question it asked too.
    expect(indexOf(lines, /^\[analyst\] says: I need one detail/)).toBeLessThan(indexOf(lines, /^\? analyst asks \(pipeline #1\):/));
  });

  it("shows the failing step's line before the pipeline's failure", async () => {
    const { session, lines } = await started([
      { name: 'analyst', role: 'analyst' },
      { name: 'engineer', role: 'engineer' },
    ]);
    // The offline engineer cannot write this one and fails the task.
    await session.post('Write a program that sorts the lines of a file.');
    busyUntilInboxHas(session, 'pipeline_update');
    session.drainInbox();
    const failed = /^\[engineer\] failed #2: the offline model cannot implement/;
    await waitUntil(() => indexOf(lines, /^= Pipeline #1 failed/) >= 0 && indexOf(lines, failed) >= 0, 'the failure lines');
    expect(indexOf(lines, /^\[engineer\] fail_task/)).toBeLessThan(indexOf(lines, failed));
    expect(indexOf(lines, failed)).toBeLessThan(indexOf(lines, /^= Pipeline #1 failed/));
  });
});

describe('HeldMessages', () => {
  const message = (from: string, content: string): Message => ({ id: `${from}-${content}`, type: 'message', from, to: 'lead', content, at: new Date().toISOString() });

  it("holds a sender's messages in order until it caught up, without holding other senders", () => {
    const ready = new Set<string>(['bob']);
    const delivered: string[] = [];
    const held = new HeldMessages((m) => ready.has(m.content), (m) => delivered.push(m.content));
    held.add(message('ann', 'a1'));
    held.add(message('ann', 'a2'));
    held.add(message('bob', 'bob'));
    expect(delivered).toEqual(['bob']);
    ready.add('a2');
    held.release();
    // a2 is ready, but a1 (sent before it) is not: nothing of ann's yet.
    expect(delivered).toEqual(['bob']);
    ready.add('a1');
    held.release();
    expect(delivered).toEqual(['bob', 'a1', 'a2']);
    expect(held.size).toBe(0);
  });
});

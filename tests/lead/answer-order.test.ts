/**
 * The log says a question was answered before anything the asker did with the answer: the lead puts
 * its `question_answered` in the log before the answer reaches the asker's inbox, so a lead whose main
 * thread is busy just after (an ink render) cannot leave it behind the asker's next steps. The asker
 * is an `autoteam worker` in its own process (woken by its own watcher, not the lead's); the simulated
 * user answers (--auto) on the offline model, whose analyst asks twice.
 */
import { describe, expect, it } from 'vitest';
import { HANG_MS } from '../helpers/agent-wait.js';
import { CliChild } from '../helpers/cli-child.js';
import { sessionsOnTempBoards } from '../helpers/repl-session.js';

const made = sessionsOnTempBoards('autoteam-answer-order-');
const DOWNLOADS = 'Write a Python script that organizes my Downloads folder by file type.';

describe('an answer in the log', () => {
  it('comes before the tool call that read it, for every question', async () => {
    const root = made.board();
    const session = made.session({ rootDir: root, model: { kind: 'offline', reason: 'test' }, auto: true });
    await session.start([]);
    const worker = CliChild.start(['worker', '--name', 'analyst', '--role', 'analyst', '--dir', root], { cwd: root });
    try {
      await worker.waitForLine((line) => line.includes('idle'), 'the analyst to wait for work');
      const analysed = new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('the analysis did not complete')), HANG_MS);
        session.subscribe((event) => {
          if (event.type === 'team' && event.event.type === 'task_completed' && event.event.agent === 'analyst') {
            clearTimeout(timer);
            resolve();
          }
        });
      });
      // The lead's main thread busy once it has answered (an ink render, say), while the asker goes on.
      session.subscribe((event) => {
        if (event.type === 'answered') Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 300);
      });
      const first = await session.post(DOWNLOADS);
      await analysed;
      const events = await session.events({ pipeline: first.pipeline! });
      const answered = events.filter((event) => event.type === 'question_answered');
      const asked = events.filter((event) => event.type === 'tool_call' && event.tool === 'ask_clarifying_question');
      expect(answered.length).toBeGreaterThanOrEqual(2);
      expect(asked).toHaveLength(answered.length);
      answered.forEach((answer, n) => expect(answer.seq!, `answer ${n + 1}`).toBeLessThan(asked[n]!.seq!));
    } finally {
      await worker.stop();
    }
  });
});

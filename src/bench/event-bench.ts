import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { FileEventLog } from '../core/events/file-log.js';
import type { TeamEvent } from '../core/events/schema.js';
import { atLeast, atMost, type BenchSection, epochMs, info, percentile, withTempRoot } from './section.js';

const HERE = fileURLToPath(import.meta.url);

function event(agent: string, i: number): TeamEvent {
  return { type: 'note', ts: new Date().toISOString(), team: 'bench', agent, text: `${agent} ${i} at ${epochMs()}` } as TeamEvent;
}

/** One appender process: `node event-bench.js append <root> <agent> <count>` (each event its own append). */
async function appender(root: string, agent: string, count: number): Promise<void> {
  const log = new FileEventLog(root);
  for (let i = 1; i <= count; i++) await log.append([event(agent, i)]);
}

function spawnAppender(root: string, agent: string, count: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [HERE, 'append', root, agent, String(count)], { stdio: ['ignore', 'ignore', 'inherit'] });
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`appender ${agent} exited ${code}`))));
  });
}

/**
 * The file board's event log: events appended per second by three processes racing (each event its
 * own locked append: the worst case; a teammate batches a tick's events), and how soon a follower in
 * this process sees an event another process appended.
 */
export const eventLog: BenchSection = {
  name: 'event log',
  async run({ quick, log }) {
    const count = quick ? 200 : 1_000;
    return withTempRoot('events', async (root) => {
      log(`event log: 3 processes × ${count} appends`);
      const follower = new FileEventLog(root, { pollMs: 1_000 });
      const lags: number[] = [];
      const stop = new AbortController();
      const following = follower.subscribe({}, (e) => {
        const sent = Number(/at ([\d.]+)$/.exec((e as { text: string }).text)?.[1]);
        if (Number.isFinite(sent)) lags.push(epochMs() - sent);
      }, stop.signal);
      const started = epochMs();
      await Promise.all(['a', 'b', 'c'].map((agent) => spawnAppender(root, agent, count)));
      const seconds = (epochMs() - started) / 1000;
      const written = await follower.read();
      const deadline = Date.now() + 30_000;
      while (lags.length < written.length && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      stop.abort();
      await following;
      const contiguous = written.every((e, i) => e.seq === i + 1);
      return [
        atLeast('events appended/s, 3 processes × 1 event per append (locked, numbered)', Math.round((3 * count) / seconds), 'events/s', 1_000),
        atMost('events lost or numbered out of order', (3 * count - written.length) + (contiguous ? 0 : 1), '', 0),
        atMost('another process appends → a follower here sees it (p50)', Math.round(percentile(lags, 50) * 10) / 10, 'ms', 50),
        info('the same, p99', Math.round(percentile(lags, 99) * 10) / 10, 'ms'),
      ];
    });
  },
};

if (process.argv[1] === HERE && process.argv[2] === 'append') {
  await appender(process.argv[3]!, process.argv[4]!, Number(process.argv[5]));
}

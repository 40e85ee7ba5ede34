import { fileBoard } from '../core/board/board.js';
import { BoardLead } from '../core/lead/board-lead.js';
import { startWebBoard } from '../web/server.js';
import { atMost, type BenchSection, epochMs, info, percentile, withTempRoot } from './section.js';

const PAGES = 5;

/** One page's feed: the server-sent events it gets, parsed, with when each arrived. */
async function openFeed(url: string, token: string, onMessage: (event: string, data: string, at: number) => void, signal: AbortSignal): Promise<void> {
  const response = await fetch(url, { headers: { authorization: `Bearer ${token}` }, signal });
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  void (async () => {
    for (;;) {
      const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true as const }));
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const event = /^event: (.*)$/m.exec(block)?.[1] ?? 'message';
        onMessage(event, block.slice(block.indexOf('data: ') + 6), epochMs());
      }
    }
  })();
}

/**
 * The web board on a big board: five pages' feeds on a file board of 10,000 tasks. How large the
 * first message is and how soon it arrives, and how soon a change on the board reaches all five
 * pages (the feed gathers changes for 150 ms, then sends only the changed cards).
 */
export const webBoard: BenchSection = {
  name: 'web board',
  async run({ quick, log }) {
    const tasks = quick ? 1_000 : 10_000;
    const changes = quick ? 10 : 40;
    return withTempRoot('web', async (root) => {
      const board = fileBoard(root);
      log(`web board: ${tasks} tasks`);
      for (let i = 1; i <= tasks; i++) await board.tasks.create({ subject: `Archive batch ${i}`, description: 'old records', role: 'archivist' });
      const lead = new BoardLead(board, { reconcileMs: 1_000 });
      await lead.start();
      const web = await startWebBoard({ controls: lead, port: 0 });
      const stop = new AbortController();
      try {
        const origin = new URL(web.url).origin;
        const hellos: Array<{ bytes: number; ms: number }> = [];
        const seen = Array.from({ length: PAGES }, () => new Map<number, number>());
        const connected = epochMs();
        await Promise.all(
          seen.map((ids, page) =>
            openFeed(`${origin}/api/events`, web.token, (event, data, at) => {
              if (event === 'hello') hellos[page] = { bytes: Buffer.byteLength(data), ms: at - connected };
              if (event !== 'cards') return;
              for (const match of data.matchAll(/"id":(\d+),"subject"/g)) ids.set(Number(match[1]), at);
            }, stop.signal),
          ),
        );
        while (hellos.filter(Boolean).length < PAGES) await new Promise((resolve) => setTimeout(resolve, 10));
        log(`web board: ${changes} changes, each followed to ${PAGES} pages`);
        const lags: number[] = [];
        const cpu = process.cpuUsage();
        for (let i = 0; i < changes; i++) {
          const id = 1 + ((i * 997) % tasks);
          const before = epochMs();
          await board.tasks.update(id, { subject: `Archive batch ${id} (checked ${i})` });
          const deadline = Date.now() + 10_000;
          while (!seen.every((ids) => (ids.get(id) ?? 0) >= before) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 2));
          lags.push(Math.max(...seen.map((ids) => (ids.get(id) ?? Number.POSITIVE_INFINITY) - before)));
        }
        const used = process.cpuUsage(cpu);
        return [
          info(`first message to a page (${tasks} cards)`, Math.round(percentile(hellos.map((hello) => hello.bytes), 50) / 1024), 'KB'),
          atMost(`first message received, ${PAGES} pages at once`, Math.round(Math.max(...hellos.map((hello) => hello.ms))), 'ms', 2_000),
          atMost(`change → all ${PAGES} pages, p50`, Math.round(percentile(lags, 50)), 'ms', 400),
          info(`change → all ${PAGES} pages, p95`, Math.round(percentile(lags, 95)), 'ms'),
          info('process CPU per change (write, watcher, diff, 5 feeds)', Math.round((used.user + used.system) / 1000 / changes), 'ms'),
          info('server RSS', Math.round(process.memoryUsage().rss / 1024 / 1024), 'MB'),
        ];
      } finally {
        stop.abort();
        await web.close();
        await lead.close();
        await board.close();
      }
    });
  },
};

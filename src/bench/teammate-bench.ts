import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { openTaskStore } from '../core/board/open.js';
import { type BenchBackend, fileBackend, postgresBackend } from './board-bench.js';
import { atMost, type BenchSection, info, percentile, withTempRoot } from './section.js';

const CLI = fileURLToPath(new URL('../cli/bundle/main.js', import.meta.url));
const HOST = fileURLToPath(new URL('./teammate-host.js', import.meta.url));

/** An idle `autoteam worker` in another process: how long from a post to its claim. */
function postToClaimOn(backend: BenchBackend, p50Target: number): BenchSection {
  return {
    name: `post→claim (${backend.name})`,
    async run({ quick, log }) {
      const posts = quick ? 20 : 40;
      const rows = await backend.with('claim-latency', async (location) =>
        withTempRoot('claim-latency-local', async (root) => {
          const env = { ...process.env, POLL_INTERVAL: '30s', IDLE_TIMEOUT: '0', ANTHROPIC_API_KEY: '', ANTHROPIC_AUTH_TOKEN: '' };
          const boardArgs = backend.name === 'postgres' ? ['--board', location] : [];
          const child = spawn(process.execPath, [CLI, 'worker', '--name', 'eng', '--role', 'engineer', '--dir', root, ...boardArgs], { env, stdio: ['ignore', 'pipe', 'inherit'] });
          let output = '';
          child.stdout.setEncoding('utf8');
          const ready = new Promise<void>((resolve) => {
            child.stdout.on('data', (text: string) => {
              output += text;
              if (output.includes('idle')) resolve();
            });
          });
          await ready;
          const board = await openTaskStore(backend.name === 'postgres' ? location : root);
          log(`post→claim on the ${backend.name} board: ${posts} general tasks posted one at a time to an idle worker process (poll 30 s)`);
          const latencies: number[] = [];
          try {
            for (let i = 0; i < posts; i++) {
              const posted = Date.now();
              const task = await board.create({ subject: `bench ${i}`, description: 'Run `true` in the workspace.', by: 'bench' });
              // Polled here (not measured: the claim's own time is in the task's history).
              for (;;) {
                await board.refresh();
                const current = await board.get(task.id);
                if (current.status !== 'pending' && current.status !== 'in_progress') break;
                await new Promise((resolve) => setTimeout(resolve, 20));
              }
              const claimed = (await board.get(task.id)).history.find((entry) => entry.event === 'claimed');
              if (claimed) latencies.push(Date.parse(claimed.at) - posted);
            }
          } finally {
            await board.close?.();
            child.kill('SIGTERM');
            await new Promise((resolve) => child.once('exit', resolve));
          }
          return [
            atMost('post→claim p50 (idle worker, other process)', percentile(latencies, 50), 'ms', p50Target),
            atMost('post→claim p99', percentile(latencies, 99), 'ms', 150),
            info('post→claim samples', latencies.length, ''),
          ];
        }),
        log,
      );
      return 'skipped' in rows ? [info(`skipped: ${rows.skipped}`, 0, '')] : rows;
    },
  };
}

/** Resident memory of one process hosting three idle teammate threads. */
export const idleMemory: BenchSection = {
  name: 'idle memory',
  async run({ log }) {
    return withTempRoot('memory', async (root) => {
      log('idle memory: 3 teammates in worker threads, offline model');
      const child = spawn(process.execPath, [HOST, root, '3'], { stdio: ['ignore', 'pipe', 'inherit'] });
      let output = '';
      child.stdout.setEncoding('utf8');
      child.stdout.on('data', (text: string) => (output += text));
      const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
      if (code !== 0) throw new Error(`teammate host exited with ${code}`);
      const { baseline, rss } = JSON.parse(output.trim().split('\n').at(-1)!) as { baseline: number; rss: number };
      const mb = (bytes: number) => Math.round(bytes / 1024 / 1024);
      return [atMost('RSS, 3 idle teammates (whole process)', mb(rss), 'MB', 150), info('RSS of the bare process before them', mb(baseline), 'MB')];
    });
  },
};

export const teammateSections: BenchSection[] = [postToClaimOn(fileBackend, 25), postToClaimOn(postgresBackend, 25), idleMemory];

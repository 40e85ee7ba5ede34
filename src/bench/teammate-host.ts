/**
 * Bench child: hosts N idle teammates in worker threads (offline model) and reports the process's
 * memory once they are all idle. Run as `node dist/bench/teammate-host.js <root> <count>`.
 */
import { TeammateManager } from '../core/agent/manager.js';
import { TeamRegistry } from '../core/board/team-registry.js';
import { BoardWatcher } from '../core/board/watcher.js';

const [root, countText] = process.argv.slice(2);
const count = Number(countText ?? 3);
const baseline = process.memoryUsage().rss;
const registry = new TeamRegistry(root!);
await registry.ensure('bench');
const watcher = new BoardWatcher(root!);
await watcher.start();
const manager = new TeammateManager({ rootDir: root!, model: { kind: 'offline', reason: 'bench' }, watcher, settings: { idleTimeoutMs: 0 } });
const idle = new Set<string>();
const allIdle = new Promise<void>((resolve) => {
  manager.on('event', (event) => {
    if (event.type === 'status' && event.status === 'idle') idle.add(event.name);
    if (idle.size === count) resolve();
  });
});
const roles = ['analyst', 'engineer', 'reviewer'];
for (let i = 0; i < count; i++) manager.spawn(`mate${i}`, roles[i % roles.length]!);
await allIdle;
// Let the threads settle after start-up allocations before reading RSS.
await new Promise((resolve) => setTimeout(resolve, 500));
const rss = process.memoryUsage().rss;
process.stdout.write(`${JSON.stringify({ baseline, rss })}\n`);
await manager.close(1_000);
await watcher.close();

/**
 * Bench child for the scale benchmark: one process hosting some of the team's teammates in worker
 * threads (as the lead's process hosts them), on a shared board, each on the real `anthropic` provider
 * pointed at the loopback model. Started with `fork` and driven over its IPC channel:
 *
 *   parent → {type: 'measure', ms}   child → {type: 'measured', cpuMs, totalCpuMs, rss, bareRss}
 *     (CPU and RSS are the host's and its threads' process launchers')
 *   parent → {type: 'stop'}          child exits
 *   child → {type: 'status', name, status}   as each teammate's status changes
 *
 * Run as `node dist/bench/scale-host.js '<json HostSpec>'`.
 */
import { TeammateManager } from '../core/agent/manager.js';
import { openBoard } from '../core/board/board.js';
import { ownLaunchers, procCpuMs, procRss, threadsWaitMs } from './proc-usage.js';
import { type FromHost, HostSpec, ToHost } from './scale-protocol.js';

const loopbackModel = (baseURL: string) => ({ kind: 'anthropic' as const, model: 'claude-bench-loopback', apiKey: 'bench-loopback', baseURL });

async function main(): Promise<void> {
  const spec = HostSpec.parse(JSON.parse(process.argv[2] ?? ''));
  const send = (message: FromHost) => process.send?.(message);
  const bareRss = process.memoryUsage().rss;
  const board = await openBoard(spec.location, spec.rootDir);
  const watcher = board.events();
  await watcher.start();
  // One manager for the process, as a lead has: each teammate on its own loopback address.
  const manager = new TeammateManager({
    rootDir: spec.rootDir,
    board,
    watcher,
    model: loopbackModel(spec.team[0]!.baseURL),
    settings: { idleTimeoutMs: 0 },
    ...(spec.cores ? { cores: spec.cores } : {}),
  });
  manager.on('event', (event) => {
    if (event.type === 'status') send({ type: 'status', name: event.name, status: event.status });
    if (event.type === 'error') send({ type: 'log', text: `${event.name}: ${event.error.code}: ${event.error.message}` });
  });
  // As a lead starts its team: each role's teammates share threads as the machine's cores allow.
  manager.spawnTeam(spec.team.map((member) => ({ name: member.name, role: member.role, model: loopbackModel(member.baseURL) })));
  process.on('message', (raw) => {
    const message = ToHost.parse(raw);
    if (message.type === 'measure') {
      const cpu = process.cpuUsage();
      const launchersBefore = new Map(ownLaunchers().map((pid) => [pid, procCpuMs(pid)]));
      setTimeout(() => {
        const used = process.cpuUsage(cpu);
        const total = process.cpuUsage();
        // The host's process launchers are its own cost (a launcher that quit within the window is missed).
        let launcherCpu = 0;
        let launcherUsed = 0;
        let rss = process.memoryUsage().rss;
        for (const pid of ownLaunchers()) {
          const cpuMs = procCpuMs(pid);
          launcherCpu += cpuMs;
          launcherUsed += cpuMs - (launchersBefore.get(pid) ?? 0);
          rss += procRss(pid);
        }
        send({ type: 'measured', cpuMs: (used.user + used.system) / 1000 + launcherUsed, totalCpuMs: (total.user + total.system) / 1000 + launcherCpu, waitMs: threadsWaitMs(), rss, bareRss });
      }, message.ms);
      return;
    }
    void stop();
  });
  let stopping: Promise<void> | null = null;
  const stop = () =>
    (stopping ??= (async () => {
      await manager.close(2_000);
      await watcher.close();
      await board.close();
      if (process.connected) process.disconnect();
    })());
  // A bench that died (killed, crashed) leaves no idle team behind: the channel closing stops the host.
  process.once('disconnect', () => void stop().then(() => process.exit(0)));
}

await main();

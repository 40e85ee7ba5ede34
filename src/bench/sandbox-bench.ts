import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runProcess } from '../core/exec/process.js';
import { launcherPid, startDirectly } from '../core/exec/launcher.js';
import { procCpuMs } from './proc-usage.js';
import { containment, DEFAULT_LIMITS, Sandbox } from '../core/exec/sandbox.js';
import { type BenchSection, info, percentile } from './section.js';

/**
 * What containment costs per tool call: `bash -c true` started plain (process group, allow-listed
 * environment, sweep), with limits only (no bubblewrap), and inside bubblewrap with limits. Then what
 * a start costs a host as large as one running a dozen teammates, started by the host itself (a fork
 * of the whole host) and through the thread's launcher (core/exec/launcher.ts).
 */
export const sandboxOverhead: BenchSection = {
  name: 'sandbox',
  async run(options) {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-bench-sandbox-'));
    const workspace = path.join(root, 'workspace', '1');
    fs.mkdirSync(workspace, { recursive: true });
    const rounds = options.quick ? 20 : 100;
    const time = async (sandbox: Sandbox | undefined) => {
      const samples: number[] = [];
      for (let i = 0; i < rounds; i++) {
        const started = performance.now();
        const result = await runProcess('bash', ['-c', 'true'], { cwd: workspace, timeoutMs: 10_000, maxOutputChars: 1_000, ...(sandbox ? { sandbox } : {}) });
        if (result.exitCode !== 0) throw new Error(`bash -c true failed: ${result.stderr || result.error}`);
        samples.push(performance.now() - started);
      }
      return samples;
    };
    try {
      const options = { workspace, hidden: [root], network: false, limits: DEFAULT_LIMITS };
      const plain = await time(undefined);
      const limitsOnly = await time(new Sandbox(options, { kind: 'none', reason: 'bench' }));
      const rows = [
        info('bash -c true, plain: p50', Math.round(percentile(plain, 50) * 10) / 10, 'ms'),
        info('bash -c true, limits + clean env (no bubblewrap): p50', Math.round(percentile(limitsOnly, 50) * 10) / 10, 'ms'),
      ];
      const contained = containment();
      if (contained.kind === 'bwrap') {
        const boxed = await time(new Sandbox(options, contained));
        const p50 = percentile(boxed, 50);
        rows.push(info('bash -c true, bubblewrap + limits: p50', Math.round(p50 * 10) / 10, 'ms'));
        rows.push(info('bubblewrap overhead per process (p50 ratio to plain)', Math.round((p50 / percentile(plain, 50)) * 10) / 10, '×'));
      }
      rows.push(...(await largeHost(workspace, rounds)));
      return rows;
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  },
};

/** Resident memory of the large host: about what a process running twelve teammates holds. */
const LARGE_HOST_MB = 400;

/** Starts of `bash -c true` from this process holding LARGE_HOST_MB more: direct, then through the launcher. */
async function largeHost(workspace: string, rounds: number) {
  const held = Array.from({ length: LARGE_HOST_MB }, () => Buffer.alloc(1024 * 1024, 1));
  const run = async () => {
    const result = await runProcess('bash', ['-c', 'true'], { cwd: workspace, timeoutMs: 10_000, maxOutputChars: 1_000 });
    if (result.exitCode !== 0) throw new Error(`bash -c true failed: ${result.stderr || result.error}`);
  };
  const measure = async () => {
    await run();
    const launcher = launcherPid();
    const launcherBefore = launcher ? procCpuMs(launcher) : 0;
    const cpu = process.cpuUsage();
    const samples: number[] = [];
    for (let i = 0; i < rounds; i++) {
      const started = performance.now();
      await run();
      samples.push(performance.now() - started);
    }
    const used = process.cpuUsage(cpu);
    return { p50: percentile(samples, 50), hostCpu: (used.user + used.system) / 1000 / rounds, launcherCpu: launcher ? (procCpuMs(launcher) - launcherBefore) / rounds : 0 };
  };
  try {
    startDirectly(true);
    const direct = await measure();
    startDirectly(false);
    const launched = await measure();
    const round = (value: number) => Math.round(value * 10) / 10;
    return [
      info(`bash -c true from a ${LARGE_HOST_MB} MB host, started directly: p50`, round(direct.p50), 'ms'),
      info(`bash -c true from a ${LARGE_HOST_MB} MB host, through the launcher: p50`, round(launched.p50), 'ms'),
      info(`host CPU per start from a ${LARGE_HOST_MB} MB host, directly`, round(direct.hostCpu), 'ms'),
      info(`host CPU per start from a ${LARGE_HOST_MB} MB host, through the launcher`, round(launched.hostCpu), 'ms'),
      info('the launcher\'s own CPU per start', round(launched.launcherCpu), 'ms'),
    ];
  } finally {
    startDirectly(false);
    held.length = 0;
  }
}

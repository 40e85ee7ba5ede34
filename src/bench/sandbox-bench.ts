import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runProcess } from '../core/exec/process.js';
import { containment, DEFAULT_LIMITS, Sandbox } from '../core/exec/sandbox.js';
import { type BenchSection, info, percentile } from './section.js';

/**
 * What containment costs per tool call: `bash -c true` started plain (process group, allow-listed
 * environment, sweep), with limits only (no bubblewrap), and inside bubblewrap with limits.
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
      return rows;
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  },
};

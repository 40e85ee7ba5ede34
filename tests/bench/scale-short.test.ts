/**
 * The scale benchmark's short version (`npm run bench -- --only scale` runs the whole matrix): four
 * pipelines at once on six teammates (two of each role) in one host process on a file board, the
 * model the offline one served over loopback HTTP through the real anthropic provider, the tools
 * for real. What must hold at any load: every pipeline approved, nothing lost, nothing claimed
 * twice, and no pipeline needing more model calls than one pipeline alone. No timing is asserted.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runScale, type ScaleResult } from '../../src/bench/scale-run.js';
import { HANG_MS } from '../helpers/agent-wait.js';

/**
 * Model calls of one pipeline alone on this requirement (the bench's 1-pipeline row): analyst 3,
 * engineer 3, reviewer 2, then the revision the reviewer asks for (the draft has a lint problem),
 * engineer 4 and reviewer 2. The offline model is deterministic, so this is exact.
 */
const SINGLE_PIPELINE_CALLS = 14;

const python = spawnSync('python3', ['--version']).status === 0;

describe.runIf(python)('scale bench, short: 4 pipelines on 6 teammates, file board, one process', () => {
  let root = '';
  let result: ScaleResult;

  beforeAll(async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-scale-short-'));
    // Ceilings only a hang reaches: a quiet machine takes under a minute.
    result = await runScale({ pipelines: 4, teammates: 6, processes: 1 }, root, root, { idleWindowMs: 1_000, settleMs: 0, ceilingMs: 3 * HANG_MS, log: () => {} });
  }, 7 * HANG_MS);

  afterAll(() => {
    if (root) fs.rmSync(root, { recursive: true, force: true });
  });

  it('approves every pipeline, with no error from the loopback model or a teammate', () => {
    expect(result.errors).toEqual([]);
    expect(result.pipelines.map((pipeline) => pipeline.approved)).toEqual([true, true, true, true]);
  });

  it('loses no task and claims none twice', () => {
    expect(result.audit).toMatchObject({ lostTasks: 0, notApproved: 0, doubleClaims: 0 });
  });

  it('needs as many model calls per pipeline as one pipeline alone', () => {
    expect(result.pipelines.map((pipeline) => pipeline.modelCalls)).toEqual([SINGLE_PIPELINE_CALLS, SINGLE_PIPELINE_CALLS, SINGLE_PIPELINE_CALLS, SINGLE_PIPELINE_CALLS]);
  });

  it('accounts for each pipeline: model, tool and queueing time within its wall time', () => {
    for (const pipeline of result.pipelines) {
      expect(pipeline.modelMs).toBeGreaterThan(0);
      expect(pipeline.toolMs).toBeGreaterThan(0);
      expect(pipeline.modelMs + pipeline.toolMs + pipeline.queueMs).toBeLessThanOrEqual(pipeline.wallMs);
    }
    expect(result.rssMbPerTeammate).toBeGreaterThan(0);
    expect(result.runtimeCpuMsPerPipeline).toBeGreaterThan(0);
    // Linux counts each thread's time ready but off a core (schedstat): the bench reads the hosts'.
    if (fs.existsSync('/proc/self/task')) expect(result.runtimeWaitMsPerPipeline).toBeGreaterThanOrEqual(0);
  });
});

describe('scale bench, a host that dies', () => {
  it('fails the run at once, naming the host, instead of waiting out the ceiling', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'autoteam-scale-dies-'));
    try {
      // The log's first line comes once the team is up and before any pipeline is posted: the host is killed then.
      const killHost = () => {
        const hosts = spawnSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' })
          .stdout.split('\n')
          .filter((line) => line.includes('scale-host') && line.includes(root));
        expect(hosts).toHaveLength(1);
        process.kill(Number(hosts[0]!.trim().split(/\s+/)[0]), 'SIGKILL');
      };
      const run = runScale({ pipelines: 2, teammates: 3, processes: 1 }, root, root, { idleWindowMs: 1_000, settleMs: 0, ceilingMs: HANG_MS, log: killHost });
      await expect(run).rejects.toThrow(/the bench host of analyst, engineer, reviewer exited \(SIGKILL\) before the run ended/);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  }, 3 * HANG_MS);
});

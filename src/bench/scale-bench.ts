import { type BenchBackend, fileBackend, postgresBackend } from './board-bench.js';
import { type ScaleConfig, type ScaleResult, runScale } from './scale-run.js';
import { atMost, type BenchRow, type BenchSection, info, percentile, withTempRoot } from './section.js';

/**
 * The scale benchmark: whole pipelines (analyst → engineer → reviewer, real tools in the sandbox) on
 * the offline model served over HTTP with zero latency (loopback-model.ts), many at once. Each row
 * shows one axis against the row before it; the full cross product would take an hour on two cores.
 *
 *   1 pipeline,   3 teammates, file,     1 process  — the baseline (model calls per pipeline)
 *   4 pipelines,  6 teammates, file,     1 process  — load and team size (the CI short version)
 *  16 pipelines, 12 teammates, file,     1 process  — the target load
 *  16 pipelines, 12 teammates, file,     3 processes — the team split over processes
 *  16 pipelines, 12 teammates, postgres, 3 processes — the PostgreSQL board
 *  16 pipelines,  3 teammates, file,     1 process  — a small team under the same load (queueing)
 *  16 pipelines, 12 teammates, file,     1 process, after a wave of 16 — the target load on a warm team
 *  16 pipelines, 12 teammates, file,     1 process, a thread each — the target load without shared threads
 */
export interface ScaleRow extends ScaleConfig {
  backend: BenchBackend;
}

const FULL: ScaleRow[] = [
  { pipelines: 1, teammates: 3, processes: 1, backend: fileBackend },
  { pipelines: 4, teammates: 6, processes: 1, backend: fileBackend },
  { pipelines: 16, teammates: 12, processes: 1, backend: fileBackend },
  { pipelines: 16, teammates: 12, processes: 3, backend: fileBackend },
  { pipelines: 16, teammates: 12, processes: 3, backend: postgresBackend },
  { pipelines: 16, teammates: 3, processes: 1, backend: fileBackend },
  { pipelines: 16, teammates: 12, processes: 1, backend: fileBackend, warmWaves: 1 },
  // As many cores shared out as teammates: each in a thread of its own, as on a machine of that many cores.
  { pipelines: 16, teammates: 12, processes: 1, backend: fileBackend, cores: 36 },
];

/** --quick: the baseline and the CI short version's row. */
const QUICK: ScaleRow[] = [FULL[0]!, FULL[1]!];

export const TARGETS = { overheadMs: 100, idleCpuPct: 0.5, rssMb: 40 } as const;

export function rowLabel(row: ScaleRow): string {
  return `${row.pipelines}p×${row.teammates}t ${row.backend.name} ${row.processes}proc${row.warmWaves ? ' warm' : ''}${row.cores ? ` ${row.cores}cores` : ''}`;
}

/** The rows of one configuration; `baselineCalls` is the 1-pipeline row's model calls per pipeline. */
export function scaleRows(row: ScaleRow, result: ScaleResult, baselineCalls: number | null): BenchRow[] {
  const label = rowLabel(row);
  const done = result.pipelines.filter((pipeline) => pipeline.approved);
  const mean = (values: number[]) => (values.length ? values.reduce((a, b) => a + b, 0) / values.length : Number.NaN);
  const round = (value: number, digits = 0) => Number(value.toFixed(digits));
  const calls = result.pipelines.map((pipeline) => pipeline.modelCalls);
  const overhead = round(mean(done.map((pipeline) => pipeline.overheadMs)));
  const rows: BenchRow[] = [
    { metric: `${label}: pipelines approved`, value: done.length, unit: `of ${row.pipelines}`, target: `all ${row.pipelines}`, ok: done.length === row.pipelines },
    info(`${label}: pipelines per minute`, round((done.length / result.elapsedMs) * 60_000, 2), '/min'),
    // The row with its cores set is a comparison (a thread per teammate), not the product's own setting.
    row.pipelines >= 16 && !row.cores ? atMost(`${label}: overhead per pipeline (mean)`, overhead, 'ms', TARGETS.overheadMs) : info(`${label}: overhead per pipeline (mean)`, overhead, 'ms'),
    // The same runtime in CPU rather than wall time: flat as load grows when the wall overhead at 16 is waiting for a core.
    info(`${label}: runtime CPU per pipeline (the hosts' own CPU, first post to last end, per pipeline)`, round(result.runtimeCpuMsPerPipeline), 'ms'),
    // Ready but not running: when this passes the CPU, the wall overhead is mostly waiting for a core.
    ...(result.runtimeWaitMsPerPipeline === null ? [] : [info(`${label}: runtime threads' wait for a core per pipeline (ready, not running: /proc schedstat)`, round(result.runtimeWaitMsPerPipeline), 'ms')]),
    // Near 100 %, a runtime step that becomes ready waits for a core: the wall overhead is queueing, not work.
    ...(result.machineBusyPct === null ? [] : [info(`${label}: the machine's cores busy, first post to last end (all processes)`, round(result.machineBusyPct), '%')]),
    info(`${label}: overhead per pipeline p95`, round(percentile(done.map((pipeline) => pipeline.overheadMs), 95)), 'ms'),
    info(`${label}: model / tool / queueing time per pipeline`, round(mean(done.map((pipeline) => pipeline.modelMs))), `/ ${round(mean(done.map((pipeline) => pipeline.toolMs)))} / ${round(mean(done.map((pipeline) => pipeline.queueMs)))} ms`),
    // Flat as load grows: no pipeline may need more calls than one pipeline alone did.
    baselineCalls === null
      ? info(`${label}: model calls per pipeline`, round(mean(calls), 1), '')
      : { metric: `${label}: model calls per pipeline (max ${Math.max(...calls)})`, value: round(mean(calls), 1), unit: '', target: `≤ ${baselineCalls} (1 pipeline alone)`, ok: Math.max(...calls) <= baselineCalls },
    atMost(`${label}: idle CPU per teammate`, round(result.idleCpuPct, 2), '% core', TARGETS.idleCpuPct),
    info(`${label}: CPU per teammate settling into idle (its idle collection, the host's), before the idle window`, round(result.settleCpuMsPerTeammate), 'ms'),
    // What one more teammate costs: the hosts' RSS less what each host process held before its teammates started.
    atMost(`${label}: RSS per idle teammate (hosts' RSS less the bare hosts', per teammate)`, round((result.rssMbPerTeammate * row.teammates - result.bareRssMb) / row.teammates, 1), 'MB', TARGETS.rssMb),
    info(`${label}: RSS of the bare host process(es), summed`, round(result.bareRssMb), 'MB'),
    atMost(`${label}: lost (tasks never completed + pipelines not approved)`, result.audit.lostTasks + result.audit.notApproved, '', 0),
    atMost(`${label}: double claims`, result.audit.doubleClaims, '', 0),
    info(`${label}: lease takeovers`, result.audit.takeovers, ''),
  ];
  if (result.errors.length) rows.push({ metric: `${label}: errors (first: ${result.errors[0]!.split('\n')[0]!.slice(0, 120)})`, value: result.errors.length, unit: '', target: '0', ok: false });
  return rows;
}

export const scaleBench: BenchSection = {
  name: 'scale',
  async run({ quick, log }) {
    const rows: BenchRow[] = [];
    let baselineCalls: number | null = null;
    log('scale: whole pipelines on the offline model over loopback HTTP; tools run for real');
    for (const row of quick ? QUICK : FULL) {
      // A window long enough that a one-off collection after the work (V8's memory reducer on a host's main
      // thread can come later than SETTLE_MS) does not pass for what idle costs all along.
      const settings = { idleWindowMs: quick ? 10_000 : 15_000, ceilingMs: 15 * 60_000, log };
      const result = await row.backend.with(
        `scale-${row.pipelines}-${row.teammates}`,
        // The PostgreSQL board's local folder (the workspaces) is a temp folder of its own.
        (location) => (row.backend.name === 'file' ? runScale(row, location, location, settings) : withTempRoot('scale-local', (rootDir) => runScale(row, location, rootDir, settings))),
        log,
      );
      if ('skipped' in result) {
        rows.push(info(`${rowLabel(row)}: skipped: ${result.skipped}`, 0, ''));
        continue;
      }
      const these = scaleRows(row, result, baselineCalls);
      // Each row as it ends: a long run stopped part-way still told what it measured.
      for (const line of these) log(`    ${line.metric}: ${line.value} ${line.unit}${line.ok === false ? ' (missed)' : ''}`);
      rows.push(...these);
      if (baselineCalls === null && row.pipelines === 1) baselineCalls = Math.max(...result.pipelines.map((pipeline) => pipeline.modelCalls));
    }
    return rows;
  },
};

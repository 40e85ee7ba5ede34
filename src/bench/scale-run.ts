import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { type Board, openBoard } from '../core/board/board.js';
import type { TeamEvent } from '../core/events/schema.js';
import { BoardLead } from '../core/lead/board-lead.js';
import { playbookAnswer } from '../core/model/scripted/playbook.js';
import { LoopbackModelServer } from './loopback-model.js';
import { auditClaims, type ClaimAudit, pipelineMetrics, type PipelineMetrics } from './scale-metrics.js';
import { FromHost, type HostSpec, type ToHost } from './scale-protocol.js';
import { IDLE_COLLECT_MS } from '../worker/idle-collector.js';
import { machineCpu } from './proc-usage.js';
import { counted } from '../core/words.js';

/** One row of the scale benchmark: how many pipelines at once, on how big a team, on which board, in how many processes. */
export interface ScaleConfig {
  pipelines: number;
  teammates: number;
  processes: number;
  /**
   * Waves of `pipelines` before the one measured (default 0): the team has then worked as many
   * pipelines already — its code compiled and optimised, its parsers built, its connections open —
   * and the row measures it warm rather than its first minute.
   */
  warmWaves?: number;
  /**
   * The cores each host's manager shares out among its teammates' threads (default: the machine's).
   * As many as the team gives each teammate a thread of its own; 1 makes each role's share one thread.
   */
  cores?: number;
}

export interface ScaleResult {
  config: ScaleConfig;
  pipelines: PipelineMetrics[];
  audit: ClaimAudit;
  /** From the first post to the last pipeline's end. */
  elapsedMs: number;
  /** % of one core per teammate while the whole team sat idle, over `idleWindowMs`, once settled. */
  idleCpuPct: number;
  /**
   * The hosts' CPU per teammate from the whole team going idle to the idle window: the tail of the
   * work (each thread's idle collection, the host's own collections), not idle time.
   */
  settleCpuMsPerTeammate: number;
  /**
   * The host processes' own CPU from the first post to the last pipeline's end, per pipeline: the
   * runtime's work (prompts, the SDK, board and log writes, claims), not the tools' processes.
   */
  runtimeCpuMsPerPipeline: number;
  /**
   * The hosts' threads' time ready to run but waiting for a core, first post to last end, per
   * pipeline (null off Linux): beside the CPU, how much of the runtime's wall time a busy machine adds.
   */
  runtimeWaitMsPerPipeline: number | null;
  /** How busy the machine's cores were from the first post to the last end (every process on it), 0–100; null off Linux. */
  machineBusyPct: number | null;
  /** The teammates' processes' resident memory, summed, per teammate, idle. */
  rssMbPerTeammate: number;
  /** The same processes before they started any teammate, summed (what the process costs alone). */
  bareRssMb: number;
  /** Requests the loopback model refused, and teammates' errors: empty on a good run. */
  errors: string[];
}

/** The requirement every pipeline works: the offline model's word counter (one clarifying question). */
export const SCALE_REQUIREMENT = 'Write a Python script that counts the words in a text file.';

const ROLES = ['analyst', 'engineer', 'reviewer'] as const;
const HOST = fileURLToPath(new URL(`./scale-host.${import.meta.url.endsWith('.ts') ? 'ts' : 'js'}`, import.meta.url));

/** `count` teammates, the roles in turn: analyst, engineer, reviewer, analyst-2, engineer-2, … */
export function teamOf(count: number): Array<{ name: string; role: string }> {
  return Array.from({ length: count }, (_, i) => {
    const role = ROLES[i % ROLES.length]!;
    const n = Math.floor(i / ROLES.length) + 1;
    return { name: n === 1 ? role : `${role}-${n}`, role };
  });
}

interface Host {
  child: ChildProcess;
  count: number;
  measured(ms: number): Promise<{ cpuMs: number; totalCpuMs: number; waitMs: number | null; rss: number; bareRss: number }>;
  stop(): Promise<void>;
}

/**
 * Runs `config.pipelines` pipelines at once on a fresh board at `location` (a folder or a postgres://
 * URL; `rootDir` holds the workspaces) and reads what happened from the board's log; then measures
 * the team idle. `ceilingMs` is a hang's ceiling, not a target.
 */
/** The board's event log once it holds a `pipeline_status` end for each of `pipelines`, re-read on each append. */
async function logWith(board: Board, pipelines: ReadonlySet<number>): Promise<TeamEvent[]> {
  const complete = (events: TeamEvent[]) => [...pipelines].every((id) => events.some((event) => event.type === 'pipeline_status' && event.pipeline === id && event.status !== 'active'));
  let events = await board.log.read();
  if (complete(events)) return events;
  const following = new AbortController();
  try {
    await new Promise<void>((resolve, reject) => {
      board.log
        .subscribe({ since: events.at(-1)?.seq ?? 0 }, (event) => {
          // From `since` on, the last event read may come again: each seq once.
          if (events.some((known) => known.seq === event.seq)) return;
          events = [...events, event];
          if (complete(events)) resolve();
        }, following.signal)
        .catch(reject);
    });
  } finally {
    following.abort();
  }
  return events;
}

/**
 * Resolves once the hosts spent under 1 % of a core per teammate over a quarter of a second, or after
 * ten seconds (a profiler's sampling, say, is never quiet).
 */
async function settled(hosts: readonly Host[], teammates: number): Promise<void> {
  const windowMs = 250;
  for (let waited = 0; waited < 10_000; waited += windowMs) {
    const cpuMs = (await Promise.all(hosts.map((host) => host.measured(windowMs)))).reduce((sum, m) => sum + m.cpuMs, 0);
    if (cpuMs < windowMs * 0.01 * teammates) return;
  }
}

/**
 * From the team going idle to the idle window, by default: each thread's idle collection
 * (IDLE_COLLECT_MS after its last task), and V8's memory reducer on the host's main thread, which
 * collects 8 s after that thread's last full collection. Both are the end of the work; the window
 * measures what the team costs sitting idle for as long as it sits there.
 */
export const SETTLE_MS = IDLE_COLLECT_MS + 8_000 + 1_000;

export interface ScaleOptions {
  idleWindowMs: number;
  /** From the team going idle to the idle window (SETTLE_MS). */
  settleMs?: number;
  ceilingMs: number;
  log: (line: string) => void;
}

export async function runScale(config: ScaleConfig, location: string, rootDir: string, options: ScaleOptions): Promise<ScaleResult> {
  const team = teamOf(config.teammates);
  const board = await openBoard(location, rootDir);
  await board.registry.ensure('bench', 'bench-lead');
  const errors: string[] = [];
  const server = await LoopbackModelServer.start({
    roles: new Map(team.map((member) => [member.name, member.role])),
    async taskOf(agent) {
      await board.tasks.refresh();
      return board.tasks.list().find((task) => task.owner === agent && task.status === 'in_progress') ?? null;
    },
  });
  const lead = new BoardLead(board, { reconcileMs: 1_000 });
  await lead.start();
  // The person: answers each clarifying question at once, as the offline simulated user would.
  const unsubscribe = lead.subscribe((event) => {
    if (event.type !== 'question') return;
    void lead.answer(playbookAnswer(event.question.question, [], SCALE_REQUIREMENT), event.question.questionId).catch((error: Error) => errors.push(`answer: ${error.message}`));
  });
  const status = new Map<string, string>();
  const statusChanged: Array<() => void> = [];
  const hosts: Host[] = [];
  const waits = new Waits(options.ceilingMs);
  try {
    for (let p = 0; p < config.processes; p++) {
      const members = team.filter((_, i) => i % config.processes === p);
      if (members.length === 0) continue;
      const spec: HostSpec = { location, rootDir, team: members.map((member) => ({ ...member, baseURL: server.baseURL(member.name) })), ...(config.cores ? { cores: config.cores } : {}) };
      const onMessage = (message: FromHost) => {
        if (message.type === 'log') errors.push(message.text);
        if (message.type === 'status') {
          status.set(message.name, message.status);
          for (const wake of statusChanged.splice(0)) wake();
        }
      };
      hosts.push(startHost(spec, onMessage, (error) => waits.fail(error)));
    }
    const allIdle = async (): Promise<void> => {
      while (!(team.every((member) => status.get(member.name) === 'idle'))) await new Promise<void>((resolve) => statusChanged.push(resolve));
    };
    await waits.within(allIdle(), 'the team did not come up idle');
    // A person types the first requirement a while after the start, by when each teammate has loaded
    // what its tools need (warmRoleTools): the run starts once the hosts are quiet.
    await settled(hosts, config.teammates);
    options.log(`  ${counted(config.pipelines, 'pipeline')} on ${counted(config.teammates, 'teammate')} in ${counted(config.processes, 'process', 'processes')}, ${board.location === rootDir ? 'file' : 'postgres'} board${config.warmWaves ? `, after ${counted(config.warmWaves, 'wave')} of as many` : ''}${config.cores ? `, ${counted(config.cores, 'core')} shared out among threads` : ''}`);
    for (let wave = 0; wave < (config.warmWaves ?? 0); wave++) {
      const warming = await Promise.all(Array.from({ length: config.pipelines }, () => lead.post(SCALE_REQUIREMENT)));
      await waits.within(Promise.all(warming.map((task) => lead.waitForPipeline(task.pipeline!))), 'the warm-up wave still active');
      await waits.within(allIdle(), 'the team did not go idle after the warm-up wave');
      await settled(hosts, config.teammates);
    }
    const totals = async () => {
      const measures = await Promise.all(hosts.map((host) => host.measured(1)));
      const waits = measures.map((m) => m.waitMs);
      return { cpuMs: measures.reduce((sum, m) => sum + m.totalCpuMs, 0), waitMs: waits.includes(null) ? null : waits.reduce((sum: number, ms) => sum + ms!, 0) };
    };
    const before = await totals();
    const machineBefore = machineCpu();
    const started = Date.now();
    const posted = await Promise.all(Array.from({ length: config.pipelines }, () => lead.post(SCALE_REQUIREMENT)));
    const ids = posted.map((task) => task.pipeline!);
    const stop = new AbortController();
    const finished = await waits.within(Promise.all(ids.map((id) => lead.waitForPipeline(id, stop.signal))), 'pipelines still active').catch((error: Error) => {
      stop.abort();
      errors.push(error.message);
      return [];
    });
    const elapsedMs = Date.now() - started;
    const machineAfter = machineCpu();
    const after = await totals();
    for (const state of finished) if (state.status !== 'approved') errors.push(`pipeline #${state.id} ended ${state.status}${state.reason ? `: ${state.reason}` : ''}`);
    // Idle: every teammate back to idle after its last task, then a window of nothing to do.
    await waits.within(allIdle(), 'the team did not go idle');
    // The board says a pipeline ended as soon as its task does; the teammate's event sink writes the
    // log a moment later. Read it once every ended pipeline's end is in it.
    const ended = new Set(finished.map((state) => state.id));
    const events = await waits.within(logWith(board, ended), 'the pipelines\' ends did not reach the event log');
    // Settled: the window opens once the work's tail is done (SETTLE_MS).
    const settleMs = Math.round(Math.max(0, options.settleMs ?? SETTLE_MS));
    const settling = settleMs > 0 ? await Promise.all(hosts.map((host) => host.measured(settleMs))) : [];
    const measures = await Promise.all(hosts.map((host) => host.measured(options.idleWindowMs)));
    const cpuMs = measures.reduce((sum, m) => sum + m.cpuMs, 0);
    const rss = measures.reduce((sum, m) => sum + m.rss, 0);
    const bareRss = measures.reduce((sum, m) => sum + m.bareRss, 0);
    errors.push(...server.errors);
    return {
      config,
      pipelines: pipelineMetrics(events, ids),
      audit: auditClaims(events, ids),
      elapsedMs,
      runtimeCpuMsPerPipeline: (after.cpuMs - before.cpuMs) / config.pipelines,
      runtimeWaitMsPerPipeline: after.waitMs === null || before.waitMs === null ? null : (after.waitMs - before.waitMs) / config.pipelines,
      machineBusyPct: machineBefore && machineAfter ? ((machineAfter.busy - machineBefore.busy) / Math.max(1, machineAfter.total - machineBefore.total)) * 100 : null,
      idleCpuPct: (cpuMs / options.idleWindowMs / config.teammates) * 100,
      settleCpuMsPerTeammate: settling.reduce((sum, m) => sum + m.cpuMs, 0) / config.teammates,
      rssMbPerTeammate: rss / 1024 / 1024 / config.teammates,
      bareRssMb: bareRss / 1024 / 1024,
      errors,
    };
  } finally {
    unsubscribe();
    await Promise.all(hosts.map((host) => host.stop()));
    await lead.close();
    await server.close();
    await board.close();
  }
}

function startHost(spec: HostSpec, onMessage: (message: FromHost) => void, onDeath: (error: Error) => void): Host {
  // Under vitest the host is TypeScript: node loads it through tsx (its threads use the built worker when there is one).
  const child = fork(HOST, [JSON.stringify(spec)], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'], execArgv: HOST.endsWith('.ts') ? ['--import', 'tsx'] : [] });
  const waiting: Array<{ resolve: (message: FromHost & { type: 'measured' }) => void; reject: (error: Error) => void }> = [];
  let stopping = false;
  let death: Error | null = null;
  const exited = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      resolve();
      if (stopping) return;
      death = new Error(`the bench host of ${spec.team.map((member) => member.name).join(', ')} exited (${signal ?? `code ${code}`}) before the run ended`);
      for (const wait of waiting.splice(0)) wait.reject(death);
      onDeath(death);
    }),
  );
  child.on('message', (raw) => {
    const message = FromHost.parse(raw);
    if (message.type === 'measured') waiting.shift()?.resolve(message);
    else onMessage(message);
  });
  const send = (message: ToHost) => child.send(message);
  return {
    child,
    count: spec.team.length,
    measured: (ms) =>
      new Promise((resolve, reject) => {
        if (death) return reject(death);
        waiting.push({ resolve, reject });
        send({ type: 'measure', ms });
      }),
    async stop() {
      stopping = true;
      if (child.exitCode === null && child.connected) send({ type: 'stop' });
      const killed = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(killed);
    },
  };
}

/**
 * A run's waits: each ends at the hang's ceiling, and all of them at once when a host dies (a host
 * that cannot start, or one killed midway, would otherwise leave the bench waiting out the ceiling).
 */
class Waits {
  private failure: Error | null = null;
  private readonly waiting = new Set<(error: Error) => void>();

  constructor(private readonly ceilingMs: number) {}

  fail(error: Error): void {
    this.failure ??= error;
    for (const reject of this.waiting) reject(this.failure);
  }

  async within<T>(promise: Promise<T>, what: string): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    let rejectNow: ((error: Error) => void) | undefined;
    const ceiling = new Promise<never>((_, reject) => {
      if (this.failure) return reject(this.failure);
      rejectNow = reject;
      this.waiting.add(reject);
      timer = setTimeout(() => reject(new Error(`${what} after ${Math.round(this.ceilingMs / 1000)} s`)), this.ceilingMs);
    });
    try {
      return await Promise.race([promise, ceiling]);
    } finally {
      clearTimeout(timer);
      if (rejectNow) this.waiting.delete(rejectNow);
    }
  }
}

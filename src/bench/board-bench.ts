import fs from 'node:fs';
import { BoardWatcher, Mailbox, type Message, type Task, TaskBoard, TeamRegistry, writeJsonAtomic } from '../core/board/index.js';
import { openTaskStore } from '../core/board/open.js';
import { ActorHandle, startTogether } from './actors.js';
import { type ClaimMode, type ClaimReport, RACE_ROLE, WARMUP_ROLE } from './board-actor.js';
import { benchDatabase } from './postgres-server.js';
import { atLeast, atMost, type BenchSection, epochMs, info, percentile, scratchRoot, withTempRoot } from './section.js';

/** A board for a bench section: a fresh directory, or a fresh database on the bench's PostgreSQL server. */
export interface BenchBackend {
  name: 'file' | 'postgres';
  /** Runs `work` on a fresh board location (null: this backend cannot run here, with why). */
  with<T>(label: string, work: (location: string) => Promise<T>, log?: (line: string) => void): Promise<T | { skipped: string }>;
  /** Where claimers warm up: a scratch board, or (undefined) the raced board itself. */
  scratch?(label: string): string;
}

export const fileBackend: BenchBackend = {
  name: 'file',
  with: (label, work) => withTempRoot(label, work),
  // Warm-up claims free old versions' inodes, and on ext4 without a journal every file created in
  // the next minutes pays for each one freed: the warm-up runs on a memory filesystem, so it warms
  // the code without slowing the race it prepares.
  scratch: (label) => scratchRoot(label),
};

export const postgresBackend: BenchBackend = {
  name: 'postgres',
  async with(label, work, log) {
    const url = await benchDatabase(label, log);
    if (!url) return { skipped: 'no PostgreSQL binaries (pg_ctl, initdb) found' };
    return work(url);
  },
};

/** Claims each claimer makes (of role `warmup`) before the start signal in a warm race. */
const WARMUP_CLAIMS = 50;
/**
 * Races run per section, each on a fresh board: the claims/s row is their median. One race of 600
 * claims lasts a fraction of a second on two cores shared by three processes (and the server), so a
 * single race swings by up to 1.5× with scheduling; the median of three does not flap across a target.
 */
const RACES = 3;

interface RaceOutcome {
  rate: number;
  openMs: number[];
  doubles: number;
  unclaimed: number;
  errors: string[];
}

/**
 * (a) 3 processes × 4 claimers race over one board: claimNext, or scan then claim(id). Warm (the
 * target): each claimer opened the board and made WARMUP_CLAIMS claims before the start, as a
 * long-running teammate has. Cold (information): claimers open the board at the start signal.
 */
function claimRace(backend: BenchBackend, mode: ClaimMode, target: number | null, options: { inProcess?: boolean; cold?: boolean } = {}): BenchSection {
  const { inProcess = false, cold = false } = options;
  return {
    name: `claim race ${backend.name} ${mode === 'next' ? 'claimNext' : 'scan+claim'}${inProcess ? ' pooled' : ''}${cold ? ' cold' : ''}`,
    async run({ quick, log }) {
      const tasks = quick ? 300 : 600;
      const processes = 3;
      const threads = 4;
      const warmup = cold ? 0 : WARMUP_CLAIMS;
      const races = quick ? 1 : RACES;
      const label = `${processes}p × ${threads}${inProcess ? ' claimers on one pool' : 't'}, ${tasks} tasks, ${cold ? 'cold' : 'warm'}`;
      const race = (root: string): Promise<RaceOutcome> => raceOnce(root, backend, { mode, tasks, processes, threads, warmup, inProcess, cold, label }, log);
      const outcomes: RaceOutcome[] = [];
      for (let i = 0; i < races; i++) {
        const outcome = await backend.with(`claims-${mode}`, race, log);
        if ('skipped' in outcome) return [info(`skipped: ${outcome.skipped}`, 0, '')];
        outcomes.push(outcome);
      }
      const rates = outcomes.map((outcome) => outcome.rate);
      const median = percentile(rates, 50);
      const errors = outcomes.flatMap((outcome) => outcome.errors);
      for (const error of errors.slice(0, 5)) log(`  claim error: ${error}`);
      const openMs = outcomes.flatMap((outcome) => outcome.openMs);
      const of = races > 1 ? `, median of ${races} races` : '';
      return [
        target === null ? info(`claims/s (${label}${of})`, median, 'claims/s') : atLeast(`claims/s (${label}${of})`, median, 'claims/s', target),
        ...(races > 1 ? [info(`claims/s, each race: ${rates.join(' / ')}`, Math.min(...rates), 'claims/s (slowest)')] : []),
        info(`open and read the board, p50 of ${openMs.length}${cold ? ' (inside the timed race)' : ''}`, round(percentile(openMs, 50), 1), 'ms'),
        atMost('double claims', outcomes.reduce((sum, outcome) => sum + outcome.doubles, 0), '', 0),
        atMost('tasks left unclaimed', outcomes.reduce((sum, outcome) => sum + outcome.unclaimed, 0), '', 0),
        atMost('claimer errors', errors.length, '', 0),
      ];
    },
  };
}

/** One race on a fresh board at `root`: posts the tasks, warms the claimers up, starts them together. */
async function raceOnce(
  root: string,
  backend: BenchBackend,
  race: { mode: ClaimMode; tasks: number; processes: number; threads: number; warmup: number; inProcess: boolean; cold: boolean; label: string },
  log: (line: string) => void,
): Promise<RaceOutcome> {
  const { mode, tasks, processes, threads, warmup, inProcess, cold } = race;
  const warmupRoot = backend.scratch?.(`warmup-${mode}`) ?? root;
  const board = await openTaskStore(root);
  const scratch = warmupRoot === root ? board : await openTaskStore(warmupRoot);
  try {
    for (let i = 0; i < tasks; i++) await board.create({ subject: `claim me ${i}`, role: RACE_ROLE, by: 'bench' });
    for (let i = 0; i < processes * threads * warmup; i++) await scratch.create({ subject: `warm up ${i}`, role: WARMUP_ROLE, by: 'bench' });
  } finally {
    await board.close?.();
    if (scratch !== board) await scratch.close?.();
  }
  log(`claim race on the ${backend.name} board (${mode}): ${race.label}`);
  const hubs = Array.from({ length: processes }, (_, p) =>
    ActorHandle.process<ClaimReport>(`hub ${p}`, { kind: 'claim-hub', root, prefix: `p${p}`, threads, mode, inProcess, cold, warmup, warmupRoot }),
  );
  // Everyone is warm: let each claimer read what the others wrote meanwhile, then start.
  await Promise.all(hubs.map((hub) => hub.ready()));
  for (const hub of hubs) hub.send('catch-up');
  await Promise.all(hubs.map((hub) => hub.waitFor((message) => message.type === 'event' && message.name === 'caught-up')));
  const start = await startTogether(hubs);
  const reports = await Promise.all(hubs.map((hub) => hub.result));
  const seconds = (performance.now() - start) / 1000;

  const wins = new Map<number, number>();
  for (const report of reports) {
    for (const ids of Object.values(report.claimed)) for (const id of ids) wins.set(id, (wins.get(id) ?? 0) + 1);
  }
  const claimed = [...wins.values()].reduce((sum, count) => sum + count, 0);
  const after = await openTaskStore(root);
  await after.refresh();
  const stored = (await after.list()).filter((task) => task.role === RACE_ROLE && task.status === 'in_progress').length;
  await after.close?.();
  return {
    rate: round(claimed / seconds),
    openMs: reports.flatMap((report) => report.openMs),
    doubles: [...wins.values()].filter((count) => count > 1).length,
    unclaimed: tasks - wins.size + Math.abs(stored - wins.size),
    errors: reports.flatMap((report) => report.errors),
  };
}

/** The figures of the board this project started from, for comparison (measured then, not now). */
export const baseline: BenchSection = {
  name: 'baseline (the seed)',
  async run() {
    return [
      info('seed: scan then claim, 3 processes × 4 threads, 600 tasks', 45, 'claims/s'),
      info('seed: warm scanUnclaimed() over 600 tasks', 4, 'ms'),
    ];
  },
};

export const claimRaces: BenchSection[] = [
  claimRace(fileBackend, 'next', 1_000),
  claimRace(fileBackend, 'scan', 500),
  claimRace(fileBackend, 'next', null, { cold: true }),
  // A process on a database board claims through one pool: 4 claimers per process share it.
  claimRace(postgresBackend, 'next', 2_000, { inProcess: true }),
  claimRace(postgresBackend, 'next', null),
  // Information only: a scan on the database board first compares every row's version (refresh()).
  claimRace(postgresBackend, 'scan', null),
];

/** (b) 4 sender threads append to one inbox while this thread drains it. */
export const inboxThroughput: BenchSection = {
  name: 'inbox',
  async run({ quick, log }) {
    const senders = 4;
    const perSender = quick ? 250 : 1_000;
    return withTempRoot('inbox', async (root) => {
      const registry = new TeamRegistry(root);
      await registry.ensure('bench');
      for (let s = 0; s < senders; s++) await registry.join(`s${s}`, 'engineer');
      log(`inbox: ${senders} senders × ${perSender} messages, one drainer`);
      const actors = Array.from({ length: senders }, (_, s) =>
        ActorHandle.thread<number>(`sender ${s}`, { kind: 'send', root, from: `s${s}`, to: 'lead', count: perSender }),
      );
      const mailbox = new Mailbox(root);
      const start = await startTogether(actors);
      let sending = true;
      const sent = Promise.all(actors.map((actor) => actor.result)).finally(() => (sending = false));
      sent.catch(() => {});
      const received: Message[] = [];
      let drains = 0;
      while (sending) {
        received.push(...(await mailbox.drain('lead')));
        drains++;
        await new Promise((resolve) => setImmediate(resolve));
      }
      await sent;
      received.push(...(await mailbox.drain('lead')));
      const seconds = (performance.now() - start) / 1000;
      const expected = senders * perSender;
      const unique = new Set(received.map((message) => message.id)).size;
      return [
        info(`inbox msgs/s (${senders} senders × ${perSender})`, round(expected / seconds), 'msgs/s'),
        atMost('messages lost', expected - unique, '', 0),
        atMost('messages duplicated', received.length - unique, '', 0),
        info('drains while sending', drains, ''),
      ];
    });
  },
};

/** (c) list / scanUnclaimed over a large board: first call, then after one file changed. */
export const boardScan: BenchSection = {
  name: 'board scan',
  async run({ quick, log }) {
    const rows = [];
    for (const size of quick ? [1_000] : [1_000, 10_000]) {
      rows.push(
        ...(await withTempRoot(`scan${size}`, async (root) => {
          log(`board scan: writing ${size} tasks`);
          seedBoard(root, size);
          const writer = new TaskBoard(root);
          // A board in use has a journal: the seeded files were written around it, so one write starts it.
          await writer.update(1, { description: 'first write' });
          const limit = 10;
          const listBoard = new TaskBoard(root);
          const listCold = timed(() => listBoard.list());
          await writer.update(Math.ceil(size / 2), { description: 'changed' });
          const listWarm = timed(() => listBoard.list());
          const scanBoard = new TaskBoard(root);
          const scanCold = timed(() => scanBoard.scanUnclaimed('engineer'));
          await writer.update(Math.ceil(size / 3), { description: 'changed again' });
          const scanWarm = timed(() => scanBoard.scanUnclaimed('engineer'));
          if (listWarm.value.length !== size) throw new Error(`list() saw ${listWarm.value.length} of ${size} tasks`);
          return [
            info(`list() cold @${size}`, listCold.ms, 'ms'),
            atMost(`list() warm, 1 changed @${size}`, listWarm.ms, 'ms', limit),
            info(`scanUnclaimed() cold @${size}`, scanCold.ms, 'ms'),
            atMost(`scanUnclaimed() warm, 1 changed @${size}`, scanWarm.ms, 'ms', limit),
          ];
        })),
      );
    }
    return rows;
  },
};

/** (d) Another process creates a task; how long until this process's watcher says 'board'. */
export const watcherLatency: BenchSection = {
  name: 'watcher',
  async run({ quick, log }) {
    const posts = quick ? 20 : 50;
    return withTempRoot('watch', async (root) => {
      const watcher = new BoardWatcher(root);
      const events: number[] = [];
      watcher.on('board', () => events.push(epochMs()));
      watcher.on('error', (error) => log(`watcher error: ${error.message}`));
      await watcher.start();
      const creator = ActorHandle.process<number>('creator', { kind: 'creator', root });
      try {
        await creator.ready();
        log(`watcher: ${posts} posts from another process`);
        const latencies: number[] = [];
        for (let i = 0; i < posts; i++) {
          const boardEvent = new Promise<void>((resolve) => watcher.once('board', () => resolve()));
          const created = creator.waitFor((m) => m.type === 'event' && m.name === 'created' && (m.data as { id: number }).id === i + 1);
          creator.send('create');
          const [message] = await Promise.all([created, boardEvent]);
          const { t0 } = (message as { data: { t0: number } }).data;
          const seen = events.find((at) => at >= t0);
          if (seen !== undefined) latencies.push(seen - t0);
          events.length = 0;
        }
        creator.send('exit');
        await creator.result;
        return [
          atMost(`watcher post→'board' p50 (${latencies.length} posts)`, round(percentile(latencies, 50), 1), 'ms', 50),
          atMost(`watcher post→'board' p99`, round(percentile(latencies, 99), 1), 'ms', 250),
        ];
      } finally {
        creator.child?.kill();
        await watcher.close();
      }
    });
  },
};

export const boardSections: BenchSection[] = [baseline, ...claimRaces, inboxThroughput, boardScan, watcherLatency];

/** Writes `size` valid task files directly (creating them one by one through the id lock is the slow part of setup, not what is measured). */
function seedBoard(root: string, size: number): void {
  const board = new TaskBoard(root);
  const at = new Date().toISOString();
  const roles = [null, 'analyst', 'engineer', 'reviewer'];
  for (let id = 1; id <= size; id++) {
    const inProgress = id % 5 === 0;
    const task: Task = {
      id,
      subject: `seeded task ${id}`,
      description: 'x'.repeat(200),
      status: id % 7 === 0 ? 'completed' : inProgress ? 'in_progress' : 'pending',
      owner: inProgress ? 'someone' : null,
      role: roles[id % roles.length]!,
      stage: null,
      blockedBy: id % 11 === 0 && id > 1 ? [id - 1] : [],
      blocks: [],
      pipeline: null,
      revision: 0,
      usage: { calls: 0, inputTokens: 0, outputTokens: 0 },
      attempts: 0,
      notBefore: null,
      claims: inProgress ? 1 : 0,
      lease: inProgress ? { owner: 'someone', token: 1, until: new Date(Date.now() + 3_600_000).toISOString() } : null,
      handoff: '',
      artifacts: {},
      result: null,
      history: [{ at, by: 'bench', event: 'created' }],
      createdAt: at,
      updatedAt: at,
    };
    writeJsonAtomic(board.taskPath(id), task);
  }
  fs.writeFileSync(`${board.dir}/.next-id`, `${size + 1}\n`);
}

function timed<T>(fn: () => T): { value: T; ms: number } {
  const start = performance.now();
  const value = fn();
  return { value, ms: round(performance.now() - start, 1) };
}

function round(value: number, digits = 0): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}

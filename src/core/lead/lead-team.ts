import { originOf } from '../agent/event-order.js';
import { type ManagerEvents, type ManagerOptions, type TeammateExit, TeammateManager } from '../agent/manager.js';
import type { Board, BoardEvents } from '../board/board-types.js';
import type { BoardOutage } from '../board/outage.js';
import type { Member, Message, Task } from '../board/schemas.js';
import { HOST } from '../board/liveness.js';
import { isLive, runsNow } from '../board/team-registry.js';
import { ANY_ROLE } from '../board/task-checks.js';
import { BoardFileError, ConfigError, FATAL_MODEL_CODES, serializeError } from '../errors.js';
import { sweepOrphans } from '../exec/process.js';
import type { ModelSpec } from '../model/factory.js';
import type { StageRegistry } from '../stages/stage-registry.js';
import type { Pipeline } from '../stages/pipeline.js';
import type { ShownMember } from './lead-api.js';
import type { TeamMemberSpec, LeadEvent } from './session-types.js';
import type { Spend } from './spend.js';

/**
 * The teammates a lead session runs: their threads, the ones resting after an idle timeout (started
 * again when work for them appears), members of any process found dead, and what the threads report
 * (usage counted, errors shown once, a fatal model error kept).
 */
export class LeadTeam {
  private readonly manager: TeammateManager;
  private readonly spawned = new Map<string, TeamMemberSpec>();
  /** Teammates that shut down after IDLE_TIMEOUT (or lost the board); respawned when work for them appears. */
  private readonly resting = new Set<string>();
  /**
   * When each teammate's thread was last started: the registry lists it only once the thread has
   * joined, a moment later (until then it may hold a record of an earlier run).
   */
  private readonly startedAt = new Map<string, string>();
  /** The team a start in progress will spawn, and since when (the lease, the model and the watcher come first). */
  private readonly awaited = new Map<string, { role: string; since: string }>();
  /** The first model error no retry will fix (bad key, unknown model, unreachable endpoint). */
  private fatal: { code: string; message: string } | null = null;
  /**
   * Pending tasks, as `<id>@<claims>`, already said to wait or already pending at the session's first
   * look (null until then): a task is said once per time it is pending, and not for the board's start.
   */
  private noted: Set<string> | null = null;
  private closing = false;

  constructor(
    options: ManagerOptions & { board: Board },
    private readonly deps: {
      outage: BoardOutage;
      spend: Spend;
      emit: (event: LeadEvent) => void;
      /** Something a thread sent may now be told (its earlier events were). */
      release: () => void;
      /** A failed span export, told once by the session. */
      telemetryError: (message: string) => void;
      closed: () => boolean;
      /** The board's stages: a teammate's role must be one of theirs. */
      stages: StageRegistry;
      /** The person types the REPL's commands here (`/spawn`). */
      repl: boolean;
    },
  ) {
    this.manager = new TeammateManager(options);
    this.board = options.board;
  }

  private readonly board: Board;
  private repairTimer: NodeJS.Timeout | null = null;

  /**
   * Every 2 s: a stage completed by a process that died before posting the next stage is finished,
   * members whose process is gone are reaped, and a board that could not be reached is probed.
   */
  keepUp(pipelines: Pick<Pipeline, 'repair'>): void {
    const { deps } = this;
    this.repairTimer = setInterval(() => {
      void pipelines.repair().catch((error: unknown) => {
        const { code, message } = serializeError(error);
        if (deps.outage.hides('repair', code, message)) return;
        deps.emit({ type: 'error', code, message: `pipeline repair: ${message}` });
      });
      void this.reapDead();
      // The notice that ends an outage is the board_outage event the lead's BoardOutage emits: shown once, from the log.
      void deps.outage.probe(() => this.board.tasks.refresh());
    }, 2_000);
    this.repairTimer.unref();
  }

  /**
   * Tells the threads' events and exits from now on, and follows the board: a resting teammate is
   * woken by mail or by work its role could claim; the watcher's errors are shown (on a database
   * board they are the connection's: an outage, shown once).
   */
  listen(watcher: BoardEvents): void {
    const { deps } = this;
    watcher.on('inbox', (name) => {
      if (this.resting.has(name)) this.wakeResting(name);
    });
    // What the board holds now was there before this session: only a task posted from now on is said to wait.
    this.sayWaiting();
    watcher.on('board', () => { this.wakeResting(); this.sayWaiting(); });
    watcher.on('error', (error) => {
      if (this.board.location !== this.board.rootDir && !deps.outage.report('watcher', error.message)) return;
      // A board file a listener could not read names itself (BOARD_FILE_INVALID): not the watcher's.
      deps.emit({ type: 'error', code: (error as { code?: string }).code ?? 'WATCHER', message: error instanceof BoardFileError ? error.message : `watcher: ${error.message}` });
    });
    this.manager.on('event', (event: ManagerEvents['event'][0]) => {
      if (event.type === 'error' && FATAL_MODEL_CODES.has(event.error.code)) this.fatal ??= event.error;
      if (event.type === 'error' && deps.outage.hides(event.name, event.error.code, event.error.message)) return;
      // Every thread exports its own spans: a collector that cannot be reached is said once, by the lead.
      if (event.type === 'error' && event.error.code === 'TELEMETRY') {
        deps.telemetryError(event.error.message);
        deps.release();
        return;
      }
      if (event.type === 'usage') deps.spend.add(event.name, event.model, event.usage);
      deps.emit({ type: 'teammate', event });
      deps.release();
    });
    // A presence or look of a thread (the wakes' own) counts towards a held message of its too.
    this.manager.on('arrived', () => deps.release());
    this.manager.on('exit', (exit) => {
      // Idled out, or ended with its thread to stop another of it: started again when there is work.
      if (exit.why === 'idle_timeout' || exit.withThread) this.resting.add(exit.name);
      // A thread that could not reach the board (a database away too long) is started again when there is work.
      else if (exit.why === 'board_unreachable' && !deps.closed()) this.resting.add(exit.name);
      // Nothing more comes from that thread: what it sent is shown before it is gone.
      deps.release();
      deps.emit({ type: 'teammate_exit', exit });
    });
  }

  get fatalError(): { code: string; message: string } | null { return this.fatal; }

  /** The teammates this session runs now (name and role). */
  running(): Array<{ name: string; role: string }> { return this.manager.handles().map(({ name, role }) => ({ name, role })); }

  /** This session's teammates running, and resting ones (started again as soon as work of their role comes). */
  onCall(): Array<{ name: string; role: string }> {
    return [...this.running(), ...[...this.resting].filter((name) => this.isResting(name)).map((name) => ({ name, role: this.spawned.get(name)!.role }))];
  }

  /** Idled out (or ended with its thread), and started again as soon as work of its role comes. */
  isResting(name: string): boolean {
    return this.resting.has(name) && this.spawned.has(name) && !this.isRunning(name);
  }

  /** The roles some teammate takes: this session's running and resting ones, and live members (the registry's `members`) of other processes. */
  servingRoles(members: readonly Member[]): Set<string> {
    const roles = new Set(this.onCall().map(({ role }) => role));
    for (const member of members) if (runsNow(member)) roles.add(member.role);
    return roles;
  }

  /**
   * The teammates this session runs that have not joined the registry as far as `listed` (its members
   * as read) shows, as members `starting`: no record written since their start (only an earlier run's,
   * or none yet, or a database board's copy a moment behind).
   */
  starting(listed: readonly Member[]): ShownMember[] {
    // Joined: the registry holds a record its thread wrote since this start (join stamps heartbeat).
    const joined = new Set(listed.filter((member) => Date.parse(member.heartbeat ?? member.since) >= Date.parse(this.startedAt.get(member.name) ?? '')).map((member) => member.name));
    const threads = this.manager
      .handles()
      .filter(({ name }) => !joined.has(name))
      .map(({ name, role }) => ({ name, role, since: this.startedAt.get(name)! }));
    const awaited = [...this.awaited].filter(([name]) => !this.manager.get(name)).map(([name, { role, since }]) => ({ name, role, since }));
    return [...threads, ...awaited].map((member) => ({ ...member, status: 'starting', task: null, pid: process.pid, host: HOST }));
  }

  /**
   * The team a start now under way will spawn: listed `starting` from the start's call, as each is
   * once spawned. Each leaves this list at its spawn (done or refused); a start that fails calls it with [].
   */
  willStart(team: readonly TeamMemberSpec[]): void {
    this.awaited.clear();
    const since = new Date().toISOString();
    for (const { name, role } of team) this.awaited.set(name, { role, since });
  }

  /** Whether this session started a thread of that name (its usage comes over the thread's port). */
  spawnedHere(name: string): boolean {
    return this.spawned.has(name);
  }

  isRunning(name: string): boolean {
    return this.manager.get(name) !== undefined;
  }

  /** Once `name`, a teammate of this session still starting, has joined the team (at most 10 s); at once for anyone else. */
  async joined(name: string): Promise<void> {
    for (let waited = 0; this.isRunning(name) && !this.board.registry.get(name) && waited < 10_000; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
  }

  /** The roles of the teammates this session started. */
  roles(): string[] {
    return [...this.spawned.values()].map((member) => member.role);
  }

  /** Whether this process has seen every event the sender of `message` posted before sending it. */
  caughtUp(message: Message): boolean {
    return this.manager.caughtUp(message.from, originOf(message));
  }

  spawn(name: string, role: string, prompt?: string): void {
    this.check({ name, role });
    this.manager.spawn(name, role, prompt);
    this.started({ name, role, ...(prompt ? { prompt } : {}) });
  }

  /**
   * Starts the session's team, its roles' teammates sharing threads as the machine's cores allow
   * (TeammateManager.spawnTeam). A member that cannot start is left out, and said as the error's message.
   */
  spawnTeam(members: readonly TeamMemberSpec[]): Array<{ name: string; code: string; message: string }> {
    const refused: Array<{ name: string; code: string; message: string }> = [];
    const names: string[] = [];
    const fit = members.filter((member) => {
      try {
        if (names.includes(member.name)) throw new ConfigError(`a teammate named '${member.name}' is already running`);
        this.check(member, names);
        names.push(member.name);
        return true;
      } catch (error) {
        refused.push({ name: member.name, ...serializeError(error) });
        return false;
      }
    });
    try {
      this.manager.spawnTeam(fit);
    } catch (error) {
      // A thread that could not be made: those started before it run on, the rest are said.
      const { code, message } = serializeError(error);
      for (const member of fit) if (!this.manager.get(member.name)) refused.push({ name: member.name, code, message });
    }
    for (const member of fit) if (this.manager.get(member.name)) this.started(member);
    return refused;
  }

  /** Refuses here, before anything starts, what the thread would be refused as it joins; `batch`: the names started with it. */
  private check({ name, role }: { name: string; role: string }, batch: readonly string[] = []): void {
    this.awaited.delete(name); // the name before the role: `/spawn 'a b' engineer` has a bad name, not a bad role
    if (name.length > 64 || !/^[A-Za-z0-9_-]+$/.test(name)) throw new ConfigError(`invalid teammate name '${name.slice(0, 80)}': at most 64 letters, digits, _ and -`);
    this.deps.stages.checkRole(role);
    this.board.registry.checkNameFree(this.board.registry.read(), name, process.pid, [...this.spawned.keys(), ...batch]);
  }

  private started(member: TeamMemberSpec): void {
    this.startedAt.set(member.name, new Date().toISOString());
    this.spawned.set(member.name, member);
    this.resting.delete(member.name);
    // A teammate started again after a fatal model error is the person's answer to it: the team is not stopped any more.
    this.fatal = null;
  }

  /**
   * Respawns teammates that idled out (or were ended with a thread for another's sake) when the board
   * has work their role could claim, or mail for them: together, so that a role's share threads again.
   */
  wakeResting(messaged?: string): void {
    const due: TeamMemberSpec[] = [];
    for (const name of [...this.resting]) {
      const spec = this.spawned.get(name);
      if (!spec || this.manager.get(name)) continue;
      if (name !== messaged && this.board.tasks.scanUnclaimed(spec.role).length === 0) continue;
      this.resting.delete(name);
      due.push(spec);
    }
    for (const { code, message } of due.length ? this.spawnTeam(due) : []) this.deps.emit({ type: 'error', code, message });
  }

  /**
   * A pending task for a role no teammate takes — none of this session's runs or rests (the person
   * shut it down, it crashed), and no live member of another process has it — is said once: it waits
   * until one is started. Once per time it is pending: posted, or handed back by a teammate that died
   * or left with it (a worker killed mid-task, the role's last). Tasks pending at the session's first
   * look are not said. Said with --no-team too, where the work is for workers elsewhere: none of
   * them serving the role, nothing works it. Not once the team stopped on a model error no retry
   * fixes (its exit line says what to do).
   */
  private sayWaiting(): void {
    let tasks: readonly Task[];
    try {
      tasks = this.board.tasks.list();
    } catch {
      return; // a board that cannot be read is reported where it is used
    }
    const key = (task: Task) => `${task.id}@${task.claims}`;
    const pending = tasks.filter((task) => task.status === 'pending' && task.role);
    if (this.noted === null) {
      this.noted = new Set(pending.map(key));
      return;
    }
    const noted = this.noted;
    if (this.fatal || this.closing) return;
    // Not noted while its role is taken: a teammate that leaves before it claims it makes it wait.
    const waiting = pending.filter((task) => !noted.has(key(task)));
    if (waiting.length === 0) return;
    let serving: Set<string>;
    try {
      serving = this.servingRoles(this.board.registry.members());
    } catch {
      return; // a team config that cannot be read is reported where it is used
    }
    if (serving.has(ANY_ROLE)) return;
    const roles = this.deps.stages.roles();
    for (const task of waiting) {
      const role = task.role!;
      if (serving.has(role)) continue;
      noted.add(key(task));
      const what = task.pipeline === null ? `task #${task.id} waits: it` : `pipeline #${task.pipeline} waits: task #${task.id} (${task.stage})`;
      // A role no stage has (a task written by hand): no teammate can be started for it.
      if (!roles.includes(role)) {
        this.deps.emit({ type: 'notice', text: `${what} is for role ${role}, which no stage of this team has (roles: ${roles.join(', ')}): a teammate of role any takes it, or fix its role in the task file` });
        continue;
      }
      const start = this.deps.repl ? `/spawn <name> ${role}, or autoteam worker --role ${role}` : `autoteam worker --role ${role} on this board`;
      this.deps.emit({ type: 'notice', text: `${what} is for a teammate of role ${role}, and none runs: ${start} takes it` });
    }
  }

  /** A teammate reads its mail between turns, or wakes for it when idle; one resting is started again now, not when the watcher tells of the mail. */
  wake(name: string): void {
    if (this.resting.has(name)) this.wakeResting(name);
    else this.manager.wake(name);
  }

  setModel(role: string, spec: ModelSpec): void {
    this.manager.setModel(role, spec);
  }

  /** A teammate of this session that idled out is not started again, its record saying so to other processes; false when it was not resting. */
  async keepDown(name: string): Promise<boolean> {
    if (!this.resting.delete(name) || this.manager.get(name)) return false;
    await this.board.registry.setStatus(name, 'shutdown', { task: null, reason: 'kept down by the lead: not started again for work' }).catch(() => undefined);
    return true;
  }

  /** The shutdown protocol for one teammate (bounded wait, then stop). */
  async requestShutdown(name: string, graceMs = 5_000): Promise<TeammateExit | null> {
    this.resting.delete(name);
    return this.manager.requestShutdown(name, graceMs);
  }

  /** Members whose process is gone are marked dead and their tasks handed back at once. */
  async reapDead(): Promise<void> {
    // And what they were running: a sandbox whose autoteam process died before it could take it along.
    sweepOrphans();
    // While the board cannot be reached, nobody could beat: silence is not counted then (see BoardOutage.lastSeen).
    if (this.deps.outage.since !== null) return;
    try {
      await this.settleResting();
      // A thread of this process is alive while the manager runs it, however late its heartbeat on a
      // busy machine: its death is the thread's exit, which the manager tells (and hands its tasks back).
      const ours = (member: Member) => member.pid === process.pid && member.host === HOST && this.manager.get(member.name) !== undefined;
      for (const { member, why } of await this.board.registry.reapDead(this.deps.outage.lastSeen, ours)) {
        // In the log as a thread's death is (the manager's): `events` and the web board show it.
        this.board.sink.emit({ type: 'teammate_dead', agent: member.name, role: member.role, reason: why });
        const released = await this.board.tasks.reclaimAllFrom(member.name, `${member.name} is dead (${why})`, 'owner_dead');
        const tasks = released.length ? `; handed back ${released.map((id) => `#${id}`).join(', ')}` : '';
        this.deps.emit({ type: 'notice', text: `${member.name} is dead (${why})${tasks}` });
      }
    } catch (error) {
      const { code, message } = serializeError(error);
      if (this.deps.outage.hides('liveness', code, message)) return;
      // A board file broken by hand is named by its own error, said once with the watcher's same line.
      this.deps.emit({ type: 'error', code, message: error instanceof BoardFileError ? message : `liveness: ${message}` });
    }
  }

  /**
   * Teammates resting (their thread ended on purpose: idle, or the board unreachable) whose record
   * still says live — a thread that left while the board could not be written — are recorded as shut
   * down, not reaped as dead: the lead starts them again when there is work for them.
   */
  private async settleResting(): Promise<void> {
    for (const member of this.board.registry.read().members) {
      // Only its own record: a worker of another process may have taken the name meanwhile.
      if (!this.resting.has(member.name) || !isLive(member) || this.manager.get(member.name) || member.pid !== process.pid || member.host !== HOST) continue;
      await this.board.registry.setStatus(member.name, 'shutdown', { task: null, reason: 'resting: started again when there is work for it' });
    }
  }

  /**
   * Every teammate through the shutdown protocol (bounded), the threads ended, and the tasks still
   * held by a teammate of this session handed back. Every step runs even when one fails (a full disk):
   * the threads must end, or the process never does.
   */
  async close(graceMs: number): Promise<{ exits: TeammateExit[]; released: number[] }> {
    if (this.repairTimer) clearInterval(this.repairTimer);
    // What the team hands back as it leaves is not said to wait: the session's end says what it left.
    this.closing = true;
    const attempt = async <T>(fn: () => Promise<T>, fallback: T): Promise<T> => fn().catch(() => fallback);
    const exits = await attempt(() => this.manager.shutdownAll(graceMs), []);
    await attempt(() => this.manager.close(1_000), undefined);
    const released: number[] = [];
    for (const name of this.spawned.keys()) released.push(...(await attempt(() => this.board.tasks.reclaimAllFrom(name, 'the lead session closed', 'stopped'), [])));
    return { exits, released };
  }
}

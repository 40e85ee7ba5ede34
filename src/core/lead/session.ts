import { EventEmitter } from 'node:events';
import path from 'node:path';
import { type BoardEvents, fileBoard } from '../board/board.js';
import { type Mailbox, mergeRejected, type RejectedLines } from '../board/mailbox.js';
import type { RequestStore } from '../board/requests.js';
import type { Message, Stage, Task } from '../board/schemas.js';
import type { TaskBoardLike } from '../board/task-rules.js';
import { type ManagerEvents, type TeammateExit, TeammateManager } from '../agent/manager.js';
import { LeadLease } from '../board/liveness.js';
import { AutoteamError, ConfigError, FATAL_MODEL_CODES, serializeError, UnknownRecipientError } from '../errors.js';
import { StageRegistry } from '../stages/stage-registry.js';
import { createModel, type ModelSpec, pricer } from '../model/factory.js';
import type { ModelClient } from '../model/types.js';
import { DEFAULT_MAX_REQUEST_TOKENS } from '../agent/request-size.js';
import { sweepOrphans } from '../exec/process.js';
import { sweepScratch } from '../exec/scratch.js';
import { Pipeline } from '../stages/pipeline.js';
import { pipelineStatuses } from '../stages/pipeline-status.js';
import type { LeadServices } from '../tools/lead/services.js';
import { leadTools } from '../tools/lead/index.js';
import { leadHands } from './lead-hands.js';
import { Trace } from '../trace/trace.js';
import { createAnswerer } from './simulated-user.js';
import { BoardOutage } from '../board/outage.js';
import { originOf } from '../agent/event-order.js';
import { HeldMessages } from './held-messages.js';
import { openRepository } from './repository.js';
import type { PendingQuestion } from './questions.js';
import { DEFAULT_TEAM, type LeadEvent, type LeadSessionOptions, type TeamMemberSpec } from './session-types.js';

export type { PendingQuestion } from './questions.js';
export { DEFAULT_TEAM, type LeadEvent, type LeadSessionOptions, type TeamMemberSpec } from './session-types.js';
import { Spend } from './spend.js';
import type { EventSink } from '../events/emitter.js';
import type { EventLog } from '../events/log.js';
import { attachTelemetry } from '../telemetry/attach.js';
import { LogView } from './log-view.js';
import { QuestionDesk } from './question-desk.js';
import { type LeadHand, LEAD_HANDS } from '../config/project-config.js';
import type { TeammateSettings } from '../agent/settings.js';
import { TeamModels } from './team-models.js';

/**
 * The lead's side of the runtime, shared by every front end: owns the process's watcher, the
 * teammate threads, and the lead's inbox (questions, plan requests, pipeline updates).
 */
export class LeadSession extends EventEmitter<{ event: [LeadEvent] }> implements LeadServices {
  readonly board: TaskBoardLike;
  readonly mailbox: Mailbox;
  readonly requests: RequestStore;
  readonly watcher: BoardEvents;
  /** Where the board is: its directory, or its URL without the password. */
  readonly location: string;
  /** What each teammate of this session spent (tokens, and dollars where the model has a price). */
  readonly spend: Spend;
  private readonly manager: TeammateManager;
  readonly pipeline: Pipeline;
  readonly trace: Trace;
  readonly rootDir: string;
  private readonly desk: QuestionDesk;
  /** Messages for the person that /inbox shows (and clears). */
  readonly unread: Message[] = [];
  /** Lines of the lead's inbox that could not be read, until /inbox shows them. */
  private rejectedLines: RejectedLines | null = null;
  private model: ModelClient | null = null;
  private draining: Promise<void> = Promise.resolve();
  private auto: boolean;
  private readonly spawned = new Map<string, TeamMemberSpec>();
  private repairTimer: NodeJS.Timeout | null = null;
  /** The first model error no retry will fix (bad key, unknown model, unreachable endpoint). */
  private fatalError: { code: string; message: string } | null = null;
  private closed = false;
  private closing: Promise<{ exits: TeammateExit[]; released: number[] }> | null = null;
  /** Teammates of this session that shut down after IDLE_TIMEOUT; respawned when work for them appears. */
  private readonly resting = new Set<string>();
  private readonly models: TeamModels;
  private readonly outage = new BoardOutage(Date.now, (state, source, message) => this.sink.emit({ type: 'board_outage', agent: this.lead, state, source, message }));
  /** The lead's way onto the board's event log. */
  readonly sink: EventSink;
  /** The board's event log: what `subscribe` and telemetry read. */
  readonly log: EventLog;
  /** The team's start while it runs: a close waits for it. */
  private starting: Promise<void> | null = null;
  /** Whether a failed span export was told (once per session: every thread exports its own). */
  private telemetryTold = false;
  /** Stops this process's span export (OTEL_EXPORTER_OTLP_ENDPOINT), flushing it. */
  private detachTelemetry: () => Promise<void> = async () => undefined;
  /** The board's log as the front ends see it, from the session's start (see LogView). */
  private readonly view: LogView;
  /** The lead's inbox, each message after the events its sender posted before it (agent/event-order.ts). */
  private readonly held = new HeldMessages(
    (message) => this.manager.caughtUp(message.from, originOf(message)),
    (message) => this.dispatch(message),
  );

  constructor(private readonly options: LeadSessionOptions) {
    super();
    this.rootDir = path.resolve(options.rootDir);
    const board = options.board ?? fileBoard(this.rootDir, { ...(options.settings?.maxInboxBytes ? { maxInboxBytes: options.settings.maxInboxBytes } : {}) });
    this.sink = board.sink;
    this.log = board.log;
    this.desk = new QuestionDesk({
      board: board.tasks,
      mailbox: board.mailbox,
      sink: this.sink,
      lead: () => this.lead,
      auto: () => this.auto,
      emit: (event) => this.emit('event', event),
    });
    this.view = new LogView(
      this.log,
      board.tasks,
      (event) => this.emit('event', { type: 'team', event }),
      (error) => {
        const { code, message } = serializeError(error);
        this.emit('event', { type: 'error', code, message: `event log: ${message}` });
      },
    );
    this.location = board.location;
    this.spend = new Spend(pricer(options.model, options.settings?.prices));
    this.models = new TeamModels(options.model, options.models, options.settings?.prices);
    this.board = board.tasks;
    this.mailbox = board.mailbox;
    this.requests = board.requests;
    this.trace = new Trace(this.rootDir);
    this.watcher = board.events({ reconcileMs: options.reconcileMs ?? 1_000 });
    this.manager = new TeammateManager({ rootDir: this.rootDir, model: options.model, settings: options.settings, watcher: this.watcher, board, ...(options.models ? { models: options.models } : {}) });
    this.pipeline = new Pipeline(this.board, this.mailbox, { maxRevisions: options.settings?.runtime?.maxRevisions, trace: this.trace, events: this.sink, ...(options.settings?.hooks ? { hooks: options.settings.hooks } : {}), stages: StageRegistry.from(options.settings?.stages) });
    this.lease = board.lease();
    this.auto = options.auto ?? false;
  }

  /** One live lead per board: taken in start(), renewed while the session runs, released in close(). */
  private readonly lease: LeadLease;

  /** The board as shown in headers: its directory, or its URL (no password) and the local folder. */
  get where(): string {
    return this.location === this.rootDir ? this.rootDir : `${this.location} (local folder ${this.rootDir})`;
  }

  /** A task as this process knows it, or null (a front end names what an event is about). */
  task(id: number): Task | null {
    try {
      return this.board.get(id);
    } catch {
      return null;
    }
  }

  /** Questions waiting for the person, oldest first; none of a task that is no longer open. */
  pendingQuestions(): PendingQuestion[] {
    return this.desk.pending();
  }

  /** The teammates this session runs now (name and role). */
  running(): Array<{ name: string; role: string }> {
    return this.manager.handles().map(({ name, role }) => ({ name, role }));
  }

  isRunning(name: string): boolean {
    return this.manager.get(name) !== undefined;
  }

  /** The first model error no retry will fix (bad key, unknown model, unreachable endpoint), if any. */
  fatalModelError(): { code: string; message: string } | null {
    return this.fatalError;
  }

  /**
   * Why the team is still busy, or null when nothing can still move: a pipeline is active, a task is
   * in progress, or a general task waits for a running teammate to claim it — unless no teammate
   * runs, a fatal model error stopped them, or the team waits on a question nobody will answer.
   */
  busyReason(): string | null {
    if (this.manager.handles().length === 0 || this.fatalError) return null;
    if (this.pendingQuestions().length > 0 && !this.auto) return null;
    const tasks = this.board.list();
    const active = [...pipelineStatuses(tasks)].filter(([, status]) => status === 'active').map(([id]) => id);
    if (active.length) return `pipeline ${active.map((id) => `#${id}`).join(', ')} still active`;
    const working = tasks.filter((task) => task.status === 'in_progress');
    if (working.length) return `task ${working.map((task) => `#${task.id}`).join(', ')} in progress`;
    const roles = new Set(this.manager.handles().map((handle) => handle.role));
    const claimable = new Set([...roles].flatMap((role) => this.board.scanUnclaimed(role)).filter((task) => task.pipeline === null).map((task) => `#${task.id}`));
    return claimable.size ? `task ${[...claimable].join(', ')} waiting to be claimed` : null;
  }

  get lead(): string {
    return this.mailbox.registry.read().lead;
  }

  /** True on the offline model: its tokens cost nothing and are shown as tokens only. */
  get offline(): boolean {
    return this.models.offline;
  }

  get modelLabel(): string {
    return this.models.label;
  }

  /** The models' ids, for a JSON summary (see TeamModels.ids). */
  get modelIds(): string {
    return this.models.ids;
  }

  /** Dollars `tasks` cost at their roles' models' prices, or null when a model has no price. */
  costOf(tasks: readonly Task[]): number | null {
    return this.models.costOf(tasks);
  }

  /** The model a teammate of `role` runs on, as shown. */
  modelOf(role: string): string {
    return this.models.of(role);
  }

  /** The repository's checkout in repository mode (the lead's own folder then), or null. */
  get repositoryTop(): string | null {
    return this.pipeline.repository?.top ?? null;
  }

  /** The lead agent's file and shell tools (`lead.tools`). */
  get leadHands(): readonly LeadHand[] {
    return this.options.leadTools ?? LEAD_HANDS;
  }

  /** Every tool the lead agent is offered, by name: its team tools and its own hands. */
  leadToolNames(): string[] {
    return [...leadTools(this), ...leadHands(this.leadHands)].map((tool) => tool.name);
  }

  /** The teammates' settings, which the lead's own tools run under too (sandbox, limits). */
  get settings(): Partial<TeammateSettings> {
    return this.options.settings ?? {};
  }

  get autoAnswer(): boolean {
    return this.auto;
  }

  set autoAnswer(value: boolean) {
    this.auto = value;
    if (value) this.desk.answerAll();
  }

  /** Creates the team config, starts watching, and spawns the team. */
  async start(team: readonly TeamMemberSpec[] = DEFAULT_TEAM): Promise<void> {
    const tookOver = await this.lease.acquire();
    if (tookOver) {
      const { from, why } = tookOver;
      this.emit('event', { type: 'notice', text: `took over the board from a lead that is gone (pid ${from.pid} on ${from.host}: ${why})` });
    }
    this.starting = this.startTeam(team);
    try {
      await this.starting;
    } catch (error) {
      // A team config that cannot be read (a broken hand edit), a model that cannot be made: nothing
      // stays running, and no lead holds the board.
      this.starting = null;
      this.closed = true;
      await this.close(1_000);
      throw error;
    } finally {
      this.starting = null;
    }
  }

  private async startTeam(team: readonly TeamMemberSpec[]): Promise<void> {
    await this.view.start();
    this.detachTelemetry = await attachTelemetry({ sink: this.sink, log: this.log }, (error) => this.telemetryError(error.message));
    await this.mailbox.registry.ensure(this.options.team);
    this.pipeline.repository = await openRepository(this.options.repo, this.rootDir, (text) => this.emit('event', { type: 'notice', text }));
    await this.reapDead();
    // Scratch copies (check runs, smoke runs) of autoteam processes killed before they could remove them.
    sweepScratch();
    this.model = await createModel(this.options.model);
    // With --auto, a question the last lead left pending is answered now.
    this.desk.open(createAnswerer(this.model, this.board));
    this.watcher.on('inbox', (name) => {
      if (name === this.lead) this.drainInbox();
      else if (this.resting.has(name)) this.wakeResting(name);
    });
    this.watcher.on('board', () => {
      this.emit('event', { type: 'board' });
      this.desk.withdrawStale();
      this.wakeResting();
      // The reconcile tick doubles as the inbox poll: a lost watcher event costs at most a second.
      this.drainInbox();
    });
    this.watcher.on('error', (error) => {
      // On a database board the watcher's errors are the connection's: an outage, shown once.
      if (this.location !== this.rootDir && !this.outage.report('watcher')) return;
      this.emit('event', { type: 'error', code: 'WATCHER', message: error.message });
    });
    this.manager.on('event', (event: ManagerEvents['event'][0]) => {
      if (event.type === 'error' && FATAL_MODEL_CODES.has(event.error.code)) this.fatalError ??= event.error;
      if (event.type === 'error' && this.outage.hides(event.name, event.error.code)) return;
      // Every thread exports its own spans: a collector that cannot be reached is said once, by the lead.
      if (event.type === 'error' && event.error.code === 'TELEMETRY') {
        this.telemetryError(event.error.message);
        this.held.release();
        return;
      }
      if (event.type === 'usage') this.spend.add(event.name, event.model, event.usage);
      this.emit('event', { type: 'teammate', event });
      this.held.release();
    });
    this.manager.on('exit', (exit) => {
      if (exit.why === 'idle_timeout') this.resting.add(exit.name);
      // A thread that could not reach the board (a database away too long) is started again when there is work.
      else if (exit.why === 'board_unreachable' && !this.closed) this.resting.add(exit.name);
      // Nothing more comes from that thread: what it sent is shown before it is gone.
      this.held.release();
      this.emit('event', { type: 'teammate_exit', exit });
    });
    await this.watcher.start();
    // A stage completed by a process that died before posting the next stage is finished here.
    this.repairTimer = setInterval(() => {
      void this.pipeline.repair().catch((error: unknown) => {
        const { code, message } = serializeError(error);
        if (this.outage.hides('repair', code)) return;
        this.emit('event', { type: 'error', code, message: `pipeline repair: ${message}` });
      });
      void this.reapDead();
      void this.outage.probe(() => this.board.refresh()).then((notice) => {
        if (notice) this.emit('event', { type: 'notice', text: notice });
      });
    }, 2_000);
    this.repairTimer.unref();
    for (const member of team) {
      try {
        this.spawn(member.name, member.role, member.prompt);
      } catch (error) {
        this.emit('event', { type: 'notice', text: `${member.name} not started: ${serializeError(error).message}` });
      }
    }
    this.drainInbox();
  }

  /** Shows what the log holds beyond what was shown (see LogView.catchUp). */
  catchUp(): Promise<void> {
    return this.view.catchUp();
  }

  /** Members whose process is gone are marked dead and their tasks handed back at once. */
  private async reapDead(): Promise<void> {
    // And what they were running: a sandbox whose autoteam process died before it could take it along.
    sweepOrphans();
    // While the board cannot be reached, nobody could beat: silence is not counted then (see BoardOutage.lastSeen).
    if (this.outage.since !== null) return;
    try {
      await this.settleResting();
      for (const { member, why } of await this.mailbox.registry.reapDead(this.outage.lastSeen)) {
        const released = await this.board.reclaimAllFrom(member.name, `${member.name} is dead (${why})`, 'owner_dead');
        const tasks = released.length ? `; handed back ${released.map((id) => `#${id}`).join(', ')}` : '';
        this.emit('event', { type: 'notice', text: `${member.name} is dead (${why})${tasks}` });
      }
    } catch (error) {
      const { code, message } = serializeError(error);
      if (this.outage.hides('liveness', code)) return;
      this.emit('event', { type: 'error', code, message: `liveness: ${message}` });
    }
  }

  /**
   * Teammates resting (their thread ended on purpose: idle, or the board unreachable) whose record
   * still says live — a thread that left while the board could not be written — are recorded as shut
   * down, not reaped as dead: the lead starts them again when there is work for them.
   */
  private async settleResting(): Promise<void> {
    const live = new Set(['working', 'idle', 'waiting']);
    for (const member of this.mailbox.registry.read().members) {
      if (!this.resting.has(member.name) || !live.has(member.status) || this.manager.get(member.name)) continue;
      await this.mailbox.registry.setStatus(member.name, 'shutdown', { task: null, reason: 'resting: started again when there is work for it' });
    }
  }

  get leadModel(): ModelClient {
    if (!this.model) throw new AutoteamError('the session has not started', 'NOT_STARTED');
    return this.model;
  }

  spawn(name: string, role: string, prompt?: string) {
    this.pipeline.stages.checkRole(role);
    if (name.length > 64 || !/^[A-Za-z0-9_-]+$/.test(name)) throw new ConfigError(`invalid teammate name '${name.slice(0, 80)}': at most 64 letters, digits, _ and -`);
    // The thread would be refused when it joins; say so here, before anything starts.
    this.mailbox.registry.checkNameFree(this.mailbox.registry.read(), name);
    const handle = this.manager.spawn(name, role, prompt);
    this.spawned.set(name, { name, role, ...(prompt ? { prompt } : {}) });
    this.resting.delete(name);
    return handle;
  }

  /** Respawns teammates that idled out when the board has work their role could claim, or mail for them. */
  private wakeResting(messaged?: string): void {
    for (const name of [...this.resting]) {
      const spec = this.spawned.get(name);
      if (!spec || this.manager.get(name)) continue;
      if (name !== messaged && this.board.scanUnclaimed(spec.role).length === 0) continue;
      this.resting.delete(name);
      try {
        this.spawn(spec.name, spec.role, spec.prompt);
      } catch (error) {
        const { code, message } = serializeError(error);
        this.emit('event', { type: 'error', code, message });
      }
    }
  }

  /** The shutdown protocol for one teammate (bounded wait, then stop). */
  async requestShutdown(name: string, graceMs = 5_000): Promise<TeammateExit | null> {
    this.resting.delete(name);
    return this.manager.requestShutdown(name, graceMs);
  }

  /** A span export that failed, in this process or a teammate's thread: told once, the team works on. */
  private telemetryError(message: string): void {
    if (this.telemetryTold) return;
    this.telemetryTold = true;
    this.emit('event', { type: 'error', code: 'TELEMETRY', message: `${message} (said once; the team works on without traces)` });
  }

  /**
   * Sends one teammate a message from the lead (/msg): it reads it between turns, or wakes for it when
   * idle. A name that is not on the team is refused with the team's members.
   */
  async message(name: string, text: string): Promise<Message> {
    const config = this.mailbox.registry.read();
    const members = config.members.map((member) => member.name);
    if (!members.includes(name)) throw new UnknownRecipientError(name, config.team, members);
    const sent = await this.mailbox.send(this.lead, name, text, 'message');
    this.manager.wake(name);
    return sent;
  }

  /**
   * Teammates of `role` work their next tasks on `spec` (the task in hand finishes on the old model);
   * those started later, respawns included, start on it. A recording session records the new model
   * too; a replayed one cannot change: its answers are the recording's.
   */
  setModel(role: string, spec: ModelSpec): void {
    this.pipeline.stages.checkRole(role);
    const current = this.models.spec(role);
    if (current.kind === 'replay') throw new ConfigError(`this session replays ${current.dir}: its models cannot change`);
    const next: ModelSpec = current.kind === 'record' && spec.kind !== 'record' ? { kind: 'record', dir: current.dir, inner: spec } : spec;
    this.models.set(role, next);
    this.manager.setModel(role, next);
  }

  /** Each role of the team (and any with a model of its own) and the model it works on, then the one for other roles. */
  roleModels(): { roles: Array<{ role: string; model: string }>; others: string } {
    const roles = new Set([...[...this.spawned.values()].map((member) => member.role), ...this.models.roles()]);
    return { roles: [...roles].map((role) => ({ role, model: this.models.of(role) })), others: this.models.fallback };
  }

  async post(requirement: string, startStage?: Stage): Promise<Task> {
    return this.pipeline.post(requirement, { by: this.lead, ...(startStage ? { startStage } : {}) });
  }

  /** Answers a pending question (the oldest when no id is given); never one of a closed task. */
  answer(text: string, questionId?: string, by: 'person' | 'simulated user' = 'person'): Promise<PendingQuestion> {
    return this.desk.answer(text, questionId, by);
  }

  /** Decides a plan-approval request and tells the teammate. */
  async decidePlan(requestId: string, approve: boolean, feedback = ''): Promise<void> {
    const { ok, request } = await this.requests.resolve(requestId, approve, feedback || undefined);
    if (!ok) throw new AutoteamError(`plan request ${requestId} was already ${request.status}`, 'ALREADY_DECIDED');
    await this.mailbox.send(this.lead, request.from, feedback || (approve ? 'Approved.' : 'Rejected.'), 'plan_approval_response', {
      requestId,
      approve,
    });
  }

  pendingPlans() {
    return this.requests.list({ kind: 'plan', status: 'pending' });
  }

  /** Takes the person's unread messages (what /inbox shows). */
  takeUnread(): Message[] {
    return this.unread.splice(0);
  }

  /** Takes the lines of the lead's inbox found unreadable since the last call (where they went, which, why), or null. */
  takeRejectedLines(): RejectedLines | null {
    const found = this.rejectedLines;
    this.rejectedLines = null;
    return found;
  }

  /** The lead and members whose inbox has had unreadable lines moved aside, with how many (none: absent). */
  async rejectedCounts(): Promise<Record<string, number>> {
    const counts: Record<string, number> = {};
    for (const name of this.mailbox.registry.names()) {
      const count = await this.mailbox.rejectedCount(name).catch(() => 0);
      if (count > 0) counts[name] = count;
    }
    return counts;
  }

  /** The most estimated input tokens one request of the lead's model may carry (MAX_REQUEST_TOKENS). */
  get maxRequestTokens(): number {
    return this.options.settings?.maxRequestTokens ?? DEFAULT_MAX_REQUEST_TOKENS;
  }

  /** Waits until the pipeline is approved or failed. */
  async waitForPipeline(id: number, signal?: AbortSignal): Promise<ReturnType<Pipeline['state']>> {
    for (;;) {
      const state = this.pipeline.state(id);
      if (state.status !== 'active' || signal?.aborted) return state;
      await new Promise<void>((resolve) => {
        const done = () => {
          this.off('event', onEvent);
          signal?.removeEventListener('abort', done);
          resolve();
        };
        const onEvent = (event: LeadEvent) => {
          if (event.type === 'pipeline' || event.type === 'board' || event.type === 'teammate_exit') done();
        };
        this.on('event', onEvent);
        signal?.addEventListener('abort', done, { once: true });
      });
    }
  }

  /**
   * Quits: the shutdown protocol for every teammate (bounded), then a sweep so no task stays
   * in_progress under a teammate of this session that is gone, then the watcher.
   */
  close(graceMs = 5_000): Promise<{ exits: TeammateExit[]; released: number[] }> {
    this.closing ??= this.closeOnce(graceMs);
    return this.closing;
  }

  private async closeOnce(graceMs: number): Promise<{ exits: TeammateExit[]; released: number[] }> {
    // A quit while the team is still starting waits for it: what the start sets up (the watcher, the
    // timers) is then there to be stopped, instead of starting after the close and living on.
    await this.starting?.catch(() => undefined);
    if (this.repairTimer) clearInterval(this.repairTimer);
    // Every step runs even when one fails (a full disk): the threads must end, or the process never does.
    const attempt = async <T>(fn: () => Promise<T>, fallback: T): Promise<T> => fn().catch(() => fallback);
    const exits = await attempt(() => this.manager.shutdownAll(graceMs), []);
    await attempt(() => this.manager.close(1_000), undefined);
    const released: number[] = [];
    for (const name of this.spawned.keys()) released.push(...(await attempt(() => this.board.reclaimAllFrom(name, 'the lead session closed', 'stopped'), [])));
    await attempt(() => this.watcher.close(), undefined);
    // The teammates' last words (shutdown responses) are taken now; nothing is emitted after close.
    this.drainInbox();
    await this.draining;
    this.closed = true;
    await attempt(() => this.sink.flush(), undefined);
    // What the team wrote last (its threads' farewells) is shown before the session goes quiet.
    await attempt(() => this.view.catchUp(), undefined);
    this.view.stop();
    await attempt(() => this.detachTelemetry(), undefined);
    await attempt(() => this.lease.release(), undefined);
    return { exits, released };
  }

  /** Serialised drains of the lead's inbox; each message is dispatched once. */
  drainInbox(): void {
    if (this.closed) return;
    this.draining = this.draining.then(async () => {
      try {
        // A drain takes one batch of the inbox: a few per call, the rest at the next event or tick.
        for (let batch = 0; batch < 16; batch++) {
          const messages = await this.mailbox.drain(this.lead);
          for (const message of messages) this.held.add(message);
          const rejected = this.mailbox.takeRejected(this.lead);
          if (rejected) {
            this.rejectedLines = mergeRejected(this.rejectedLines, rejected);
            this.emit('event', { type: 'notice', text: `${rejected.count} unreadable line${rejected.count === 1 ? '' : 's'} of the lead's inbox moved to ${rejected.movedTo} (/inbox shows which)` });
          }
          if (messages.length === 0) break;
        }
      } catch (error) {
        const { code, message } = serializeError(error);
        this.emit('event', { type: 'error', code, message });
      }
    });
  }

  private dispatch(message: Message): void {
    switch (message.type) {
      case 'question':
        this.desk.asked(message);
        return;
      case 'pipeline_update':
        this.unread.push(message);
        this.emit('event', { type: 'pipeline', pipeline: Number(message.pipeline), status: String(message.status), content: message.content });
        return;
      case 'plan_approval_request':
        this.unread.push(message);
        this.emit('event', { type: 'plan', requestId: String(message.requestId), from: message.from, plan: message.content });
        return;
      default:
        this.unread.push(message);
        this.emit('event', { type: 'message', message });
    }
  }
}

import { EventEmitter } from 'node:events';
import path from 'node:path';
import { type Board, type BoardEvents, fileBoard } from '../board/board.js';
import type { RejectedLines } from '../board/mailbox.js';
import type { Message, Stage, Task } from '../board/schemas.js';
import type { TeammateExit } from '../agent/manager.js';
import { LeadLease } from '../board/liveness.js';
import { AutoteamError, serializeError, UnknownRecipientError } from '../errors.js';
import { StageRegistry } from '../stages/stage-registry.js';
import { createModel, type ModelSpec, pricer } from '../model/factory.js';
import type { ModelClient } from '../model/types.js';
import { DEFAULT_MAX_REQUEST_TOKENS } from '../agent/request-size.js';
import { sweepScratch } from '../exec/scratch.js';
import { Pipeline, type PipelineState } from '../stages/pipeline.js';
import { busyReason, waitForPipeline } from './waiting.js';
import { Trace } from '../trace/trace.js';
import { summarizeTrace, type TraceSummary } from '../trace/summary.js';
import { createAnswerer } from './simulated-user.js';
import { BoardOutage } from '../board/outage.js';
import { openRepository } from './repository.js';
import type { Repository } from '../git/worktree.js';
import type { PendingQuestion } from './questions.js';
import { DEFAULT_TEAM, type LeadEvent, type LeadSessionOptions, type TeamMemberSpec } from './session-types.js';

export type { PendingQuestion } from './questions.js';
export type { LeadApi, LeadSnapshot, MemberView, PipelineView } from './lead-api.js';
export { DEFAULT_TEAM, type LeadEvent, type LeadSessionOptions, type TeamMemberSpec } from './session-types.js';
import { Spend } from './spend.js';
import { attachTelemetry } from '../telemetry/attach.js';
import { LogView } from './log-view.js';
import { QuestionDesk } from './question-desk.js';
import { LEAD_HANDS } from '../config/project-config.js';
import { TeamModels } from './team-models.js';
import type { LeadApi, LeadSnapshot } from './lead-api.js';
import { LeadAgent, type LeadAgentHost, leadToolNames } from './lead-agent.js';
import { LeadTeam } from './lead-team.js';
import { leadAgentHost } from './lead-services.js';
import { LeadChat } from './lead-chat.js';
import { LeadInbox } from './lead-inbox.js';
import { buildSnapshot } from './snapshot.js';
import { diffPipeline, discardPipeline, mergePipeline } from './branches.js';

/**
 * The lead's side of the runtime, shared by every front end: owns the process's watcher, the
 * teammate threads, the lead agent and the lead's inbox (questions, plan requests, pipeline updates).
 * Front ends see it as a LeadApi (lead-api.ts): its parts stay private.
 */
export class LeadSession extends EventEmitter<{ event: [LeadEvent] }> implements LeadApi {
  private readonly board: Board;
  private readonly watcher: BoardEvents;
  /** What each teammate of this session spent (tokens, and dollars where the model has a price). */
  private readonly spend: Spend;
  private readonly team: LeadTeam;
  private readonly pipelines: Pipeline;
  private readonly trace: Trace;
  /** The local folder: workspaces, the trace (for a file board, the board's own). */
  readonly rootDir: string;
  private readonly desk: QuestionDesk;
  private readonly inbox: LeadInbox;
  /** The person's repository in repository mode (found when the session starts), or null. */
  private repository: Repository | null = null;
  private model: ModelClient | null = null;
  /** What the lead agent works with, and the conversation behind `ask`. */
  private readonly agentHost: LeadAgentHost;
  private readonly chat: LeadChat;
  private auto: boolean;
  private closed = false;
  private closing: Promise<{ exits: TeammateExit[]; released: number[] }> | null = null;
  private readonly models: TeamModels;
  private readonly outage = new BoardOutage(Date.now, (state, source, message) => this.board.sink.emit({ type: 'board_outage', agent: this.lead, state, source, message }));
  /** The team's start while it runs: a close waits for it. */
  private starting: Promise<void> | null = null;
  /** Whether a failed span export was told (once per session: every thread exports its own). */
  private telemetryTold = false;
  /** Stops this process's span export (OTEL_EXPORTER_OTLP_ENDPOINT), flushing it. */
  private detachTelemetry: () => Promise<void> = async () => undefined;
  /** The board's log as the front ends see it, from the session's start (see LogView). */
  private readonly view: LogView;
  /** One live lead per board: taken in start(), renewed while the session runs, released in close(). */
  private readonly lease: LeadLease;

  constructor(private readonly options: LeadSessionOptions) {
    super();
    this.rootDir = path.resolve(options.rootDir);
    const board = options.board ?? fileBoard(this.rootDir, { ...(options.settings?.maxInboxBytes ? { maxInboxBytes: options.settings.maxInboxBytes } : {}) });
    this.board = board;
    const emit = (event: LeadEvent) => this.emit('event', event);
    this.desk = new QuestionDesk({ board: board.tasks, mailbox: board.mailbox, sink: board.sink, lead: () => this.lead, auto: () => this.auto, emit });
    this.view = new LogView(
      board.log,
      board.tasks,
      (event) => emit({ type: 'team', event }),
      (error) => {
        const { code, message } = serializeError(error);
        emit({ type: 'error', code, message: `event log: ${message}` });
      },
    );
    this.spend = new Spend(pricer(options.model, options.settings?.prices));
    this.models = new TeamModels(options.model, options.models, options.settings?.prices);
    this.trace = new Trace(this.rootDir);
    this.watcher = board.events({ reconcileMs: options.reconcileMs ?? 1_000 });
    this.pipelines = new Pipeline(board.tasks, board.mailbox, { maxRevisions: options.settings?.runtime?.maxRevisions, trace: this.trace, events: board.sink, ...(options.settings?.hooks ? { hooks: options.settings.hooks } : {}), stages: StageRegistry.from(options.settings?.stages) });
    this.team = new LeadTeam(
      { rootDir: this.rootDir, model: options.model, settings: options.settings, watcher: this.watcher, board, ...(options.models ? { models: options.models } : {}) },
      { outage: this.outage, spend: this.spend, emit, release: () => this.inbox.release(), telemetryError: (message) => this.telemetryError(message), closed: () => this.closed, stages: this.pipelines.stages },
    );
    this.inbox = new LeadInbox({ mailbox: board.mailbox, requests: board.requests, lead: () => this.lead, caughtUp: (message) => this.team.caughtUp(message), asked: (message) => this.desk.asked(message), emit });
    this.lease = board.lease();
    this.auto = options.auto ?? false;
    this.agentHost = leadAgentHost({
      board,
      pipelines: this.pipelines,
      session: this,
      rootDir: this.rootDir,
      repositoryTop: () => this.repository?.top ?? null,
      settings: options.settings ?? {},
      hands: options.leadTools ?? LEAD_HANDS,
      model: () => {
        if (!this.model) throw new AutoteamError('the session has not started', 'NOT_STARTED');
        return this.model;
      },
      trace: this.trace,
      maxRequestTokens: options.settings?.maxRequestTokens ?? DEFAULT_MAX_REQUEST_TOKENS,
    });
    this.chat = new LeadChat(new LeadAgent(this.agentHost));
  }

  subscribe(listener: (event: LeadEvent) => void): () => void {
    this.on('event', listener);
    return () => this.off('event', listener);
  }

  snapshot(): LeadSnapshot {
    const tasks = this.board.tasks.list();
    return buildSnapshot({
      board: { location: this.board.location, where: this.where, rootDir: this.rootDir, repository: this.repository?.top ?? null },
      tasks,
      problems: this.board.tasks.problems(),
      team: this.board.registry.read(),
      questions: this.pendingQuestions(),
      plans: this.board.requests.list({ kind: 'plan', status: 'pending' }),
      spend: this.spend,
      models: this.models,
      roles: this.models.roleModels(this.team.roles()).roles,
      running: (name) => this.team.isRunning(name),
      autoAnswer: this.auto,
    });
  }

  get where(): string {
    return this.board.location === this.rootDir ? this.rootDir : `${this.board.location} (local folder ${this.rootDir})`;
  }

  task(id: number): Task | null {
    try {
      return this.board.tasks.get(id);
    } catch {
      return null;
    }
  }

  stateOf(pipeline: number): PipelineState {
    return this.pipelines.state(pipeline);
  }

  pendingQuestions(): PendingQuestion[] {
    return this.desk.pending();
  }

  /** The teammates this session runs now (name and role). */
  running(): Array<{ name: string; role: string }> {
    return this.team.running();
  }

  isRunning(name: string): boolean {
    return this.team.isRunning(name);
  }

  fatalModelError(): { code: string; message: string } | null {
    return this.team.fatalError;
  }

  busyReason(): string | null {
    return busyReason({ running: this.team.running(), stopped: this.team.fatalError !== null, unanswered: this.pendingQuestions().length > 0 && !this.auto, tasks: this.board.tasks });
  }

  get lead(): string {
    return this.board.registry.read().lead;
  }

  get offline(): boolean {
    return this.models.offline;
  }

  get modelLabel(): string {
    return this.models.label;
  }

  get modelIds(): string {
    return this.models.ids;
  }

  /** Dollars `tasks` cost at their roles' models' prices, or null when a model has no price. */
  costOf(tasks: readonly Task[]): number | null {
    return this.models.costOf(tasks);
  }

  modelOf(role: string): string {
    return this.models.of(role);
  }

  leadToolNames(): string[] {
    return leadToolNames(this.agentHost);
  }

  get autoAnswer(): boolean {
    return this.auto;
  }

  setAutoAnswer(on: boolean): void {
    this.auto = on;
    if (on) this.desk.answerAll();
  }

  workSummary(ids: ReadonlySet<number>, since: string): TraceSummary {
    return summarizeTrace(this.trace.read(), (record) => record.at >= since && (record.kind === 'model_call' || record.kind === 'tool_call') && record.task !== null && ids.has(record.task));
  }

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
    this.detachTelemetry = await attachTelemetry({ sink: this.board.sink, log: this.board.log }, (error) => this.telemetryError(error.message));
    await this.board.registry.ensure(this.options.team);
    this.repository = await openRepository(this.options.repo, this.rootDir, (text) => this.emit('event', { type: 'notice', text }));
    this.pipelines.useRepository(this.repository);
    await this.team.reapDead();
    // Scratch copies (check runs, smoke runs) of autoteam processes killed before they could remove them.
    sweepScratch();
    this.model = await createModel(this.options.model);
    // With --auto, a question the last lead left pending is answered now.
    this.desk.open(createAnswerer(this.model, this.board.tasks));
    this.watcher.on('inbox', (name) => {
      if (name === this.lead) this.drainInbox();
    });
    this.watcher.on('board', () => {
      this.emit('event', { type: 'board' });
      this.desk.withdrawStale();
      // The reconcile tick doubles as the inbox poll: a lost watcher event costs at most a second.
      this.drainInbox();
    });
    this.team.listen(this.watcher);
    await this.watcher.start();
    this.team.keepUp(this.pipelines);
    for (const member of team) {
      try {
        this.spawn(member.name, member.role, member.prompt);
      } catch (error) {
        this.emit('event', { type: 'notice', text: `${member.name} not started: ${serializeError(error).message}` });
      }
    }
    this.drainInbox();
  }

  catchUp(): Promise<void> {
    return this.view.catchUp();
  }

  /** A lead agent of its own over this session (the one behind `ask` is the session's), for a caller in the core. */
  leadAgent(options: { maxTurns?: number; tokenBudget?: number } = {}): LeadAgent {
    return new LeadAgent(this.agentHost, options);
  }

  async ask(text: string): Promise<string> {
    return (await this.chat.ask(text)).text;
  }

  spawn(name: string, role: string, prompt?: string): void {
    this.team.spawn(name, role, prompt);
  }

  requestShutdown(name: string, graceMs = 5_000): Promise<TeammateExit | null> {
    return this.team.requestShutdown(name, graceMs);
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
    const config = this.board.registry.read();
    const members = config.members.map((member) => member.name);
    if (!members.includes(name)) throw new UnknownRecipientError(name, config.team, members);
    const sent = await this.board.mailbox.send(this.lead, name, text, 'message');
    this.team.wake(name);
    return sent;
  }

  /** The task in hand finishes on the old model; a recording stays recording, a replay refuses (TeamModels.change). */
  setModel(role: string, spec: ModelSpec): void {
    this.pipelines.stages.checkRole(role);
    this.team.setModel(role, this.models.change(role, spec));
  }

  async post(requirement: string, startStage?: Stage): Promise<Task> {
    return this.pipelines.post(requirement, { by: this.lead, ...(startStage ? { startStage } : {}) });
  }

  answer(text: string, questionId?: string, by: 'person' | 'simulated user' = 'person'): Promise<PendingQuestion> {
    return this.desk.answer(text, questionId, by);
  }

  cancel(pipeline: number, reason?: string): Promise<number[]> {
    return this.pipelines.cancel(pipeline, this.lead, reason);
  }

  retry(pipeline: number): Promise<Task> {
    return this.pipelines.retry(pipeline, this.lead);
  }

  diff(pipeline: number): Promise<string> {
    return diffPipeline(this.board.tasks, pipeline);
  }

  merge(pipeline: number): Promise<string> {
    return mergePipeline(this.board.tasks, pipeline, this.lead);
  }

  discard(pipeline: number): Promise<string> {
    return discardPipeline(this.board.tasks, pipeline, this.lead);
  }

  decidePlan(requestId: string, approve: boolean, feedback = ''): Promise<void> {
    return this.inbox.decidePlan(requestId, approve, feedback);
  }

  takeUnread(): Message[] {
    return this.inbox.takeUnread();
  }

  takeRejectedLines(): RejectedLines | null {
    return this.inbox.takeRejectedLines();
  }

  rejectedCounts(): Promise<Record<string, number>> {
    return this.inbox.rejectedCounts();
  }

  waitForPipeline(id: number, signal?: AbortSignal): Promise<PipelineState> {
    return waitForPipeline(this, id, signal);
  }

  /**
   * Quits: the lead agent stopped, the shutdown protocol for every teammate (bounded), then a sweep
   * so no task stays in_progress under a teammate of this session that is gone, then the watcher.
   */
  close(graceMs = 5_000): Promise<{ exits: TeammateExit[]; released: number[] }> {
    this.closing ??= this.closeOnce(graceMs);
    return this.closing;
  }

  private async closeOnce(graceMs: number): Promise<{ exits: TeammateExit[]; released: number[] }> {
    this.chat.cancel();
    // A quit while the team is still starting waits for it: what the start sets up (the watcher, the
    // timers) is then there to be stopped, instead of starting after the close and living on.
    await this.starting?.catch(() => undefined);
    // Every step runs even when one fails (a full disk): the threads must end, or the process never does.
    const attempt = async <T>(fn: () => Promise<T>, fallback: T): Promise<T> => fn().catch(() => fallback);
    const { exits, released } = await this.team.close(graceMs);
    await attempt(() => this.watcher.close(), undefined);
    // The teammates' last words (shutdown responses) are taken now; nothing is emitted after close.
    await this.inbox.close(!this.closed);
    this.closed = true;
    await attempt(() => this.board.sink.flush(), undefined);
    // What the team wrote last (its threads' farewells) is shown before the session goes quiet.
    await attempt(() => this.view.catchUp(), undefined);
    this.view.stop();
    await attempt(() => this.detachTelemetry(), undefined);
    await attempt(() => this.lease.release(), undefined);
    return { exits, released };
  }

  /** Reads the lead's inbox now (it is read on every watcher event and reconcile tick anyway). */
  drainInbox(): void {
    if (!this.closed) this.inbox.drain();
  }
}

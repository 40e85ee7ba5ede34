import { EventEmitter } from 'node:events';
import path from 'node:path';
import { type Board, type BoardEvents, fileBoard } from '../board/board.js';
import type { RejectedLines } from '../board/mailbox.js';
import type { Message, Stage, Task } from '../board/schemas.js';
import { askToShutDown, type TeammateExit } from '../agent/manager.js';
import { AutoteamError, serializeError, UnknownRecipientError } from '../errors.js';
import { StageRegistry } from '../stages/stage-registry.js';
import { resolveModelChoice } from '../model/config.js';
import { type ModelSpec, pricer } from '../model/factory.js';
import type { ModelClient } from '../model/types.js';
import { DEFAULT_MAX_REQUEST_TOKENS } from '../agent/request-size.js';
import { Pipeline, type PipelineState } from '../stages/pipeline.js';
import { busyReason, waitForPipeline } from './waiting.js';
import { Trace } from '../trace/trace.js';
import type { TraceSummary } from '../trace/summary.js';
import { workSummary } from './work-summary.js';
import { BoardOutage } from '../board/outage.js';
import { runsNow } from '../board/team-registry.js';
import type { Repository } from '../git/worktree.js';
import type { PendingQuestion } from './questions.js';
import { DEFAULT_TEAM, type LeadEvent, type LeadSessionOptions, type TeamMemberSpec } from './session-types.js';

export type { PendingQuestion } from './questions.js';
export type { LeadApi, LeadControls, LeaderView, LeadSnapshot, MemberView, PipelineView } from './lead-api.js';
export { DEFAULT_TEAM, type LeadEvent, type LeadSessionOptions, type TeamMemberSpec } from './session-types.js';
import { Spend } from './spend.js';
import { LogView, unread } from './log-view.js';
import { ForeignPosts } from './foreign-posts.js';
import { QuestionDesk } from './question-desk.js';
import { LEAD_HANDS } from '../config/project-config.js';
import { TeamModels } from './team-models.js';
import type { HandMerge, LeadApi, LeaderView, LeadSnapshot } from './lead-api.js';
import { boardWhere, leaderOf } from './board-lead.js';
import type { EventFilter, TeamEvent } from '../events/schema.js';
import { LeadAgent, type LeadAgentHost, leadToolNames } from './lead-agent.js';
import { LeadTeam } from './lead-team.js';
import { leadAgentHost } from './lead-services.js';
import { LeadChat } from './lead-chat.js';
import { awaitingPlans, LeadInbox, waitingPlans } from './lead-inbox.js';
import { buildSnapshot } from './snapshot.js';
import { SessionLife } from './session-life.js';
import { diffPipeline, discardPipeline, mergePipeline } from './branches.js';
import { remoteNotice } from './post-work.js';
import { MergeQueue, MergeRunner, recheckLimits } from './merge-queue.js';

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
  private readonly models: TeamModels;
  private readonly outage = new BoardOutage(Date.now, (state, source, message) => this.board.sink.emit({ type: 'board_outage', agent: this.lead, state, source, message }));
  /** The board's log as the front ends see it, from the session's start (see LogView). */
  private readonly view: LogView;
  /** Pipelines the lead's own front end did not post: each said once (ForeignPosts). */
  private readonly foreign = new ForeignPosts();
  /** How it starts and closes (the lead's lease, the watcher, the team). */
  private readonly life: SessionLife;
  /** The merge queue's runs from this process (`/merge all`, and `autoMerge` on each approval). */
  private readonly merges: MergeRunner;

  constructor(private readonly options: LeadSessionOptions) {
    super();
    // Front ends, web feeds, MCP sessions, a wait per pipeline each subscribe: by design, not a leak.
    this.setMaxListeners(0);
    this.rootDir = path.resolve(options.rootDir);
    const emit = (event: LeadEvent) => this.emit('event', event);
    const board = options.board ?? fileBoard(this.rootDir, options.settings?.maxInboxBytes ? { maxInboxBytes: options.settings.maxInboxBytes } : {});
    this.board = board;
    this.desk = new QuestionDesk({ board: board.tasks, mailbox: board.mailbox, sink: board.sink, lead: () => this.lead, memberStatus: (name) => board.registry.shown().members.find((member) => member.name === name)?.status, auto: () => this.auto, emit });
    this.view = new LogView(
      board.log,
      board.tasks,
      (event) => {
        // Answered from another front end (the web board, another terminal), or timed out: not waiting any more.
        this.desk.heard(event);
        this.spend.addLogged(event, (name) => this.team.spawnedHere(name));
        const opened = this.foreign.opened(event, () => board.tasks.list());
        emit({ type: 'team', event });
        if (opened) emit({ type: 'notice', text: opened });
        // autoMerge: the lead merges each pipeline as it is approved (the queue keeps approval order).
        if (event.type === 'pipeline_status' && event.status === 'approved' && !this.life.closed) this.merges.auto();
      },
      (error) => emit(unread(error)),
    );
    this.spend = new Spend(pricer(options.model, options.settings?.prices));
    this.models = new TeamModels(options.model, options.models, options.settings?.prices);
    this.trace = new Trace(this.rootDir);
    this.watcher = board.events({ reconcileMs: options.reconcileMs ?? 1_000 });
    this.pipelines = new Pipeline(board.tasks, board.mailbox, { maxRevisions: options.settings?.runtime?.maxRevisions, trace: this.trace, events: board.sink, ...(options.settings?.hooks ? { hooks: options.settings.hooks } : {}), stages: StageRegistry.from(options.settings?.stages) });
    this.team = new LeadTeam(
      { rootDir: this.rootDir, model: options.model, settings: options.settings, watcher: this.watcher, board, ...(options.models ? { models: options.models } : {}) },
      { outage: this.outage, spend: this.spend, emit, release: () => this.inbox.release(), telemetryError: (message) => this.life.telemetryError(message), closed: () => this.life.closed, stages: this.pipelines.stages, repl: options.repl ?? false },
    );
    this.inbox = new LeadInbox({ mailbox: board.mailbox, requests: board.requests, lead: () => this.lead, caughtUp: (message) => this.team.caughtUp(message), asked: (message) => this.desk.asked(message), emit, outage: this.outage });
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
    const queue = (signal: AbortSignal, onLine?: (line: string) => void) => new MergeQueue({ board, pipelines: this.pipelines, by: this.lead, limits: recheckLimits(options.settings), signal, ...(onLine ? { onLine } : {}), ...(options.settings?.repository ? { remoteUrl: options.settings.repository.remote } : {}) });
    this.merges = new MergeRunner(queue, { on: options.autoMerge ?? false, onError: (error) => emit({ type: 'error', ...serializeError(error) }) });
    // One live lead per board: the lease is taken in start(), renewed while the session runs, released in close().
    this.life = new SessionLife(
      { board, watcher: this.watcher, view: this.view, team: this.team, desk: this.desk, inbox: this.inbox, chat: this.chat, lease: board.lease(), pipelines: this.pipelines, rootDir: this.rootDir, options },
      {
        lead: () => this.lead,
        emit,
        useRepository: (repository) => (this.repository = repository),
        useModel: (model) => (this.model = model),
        drainInbox: () => this.drainInbox(),
      },
    );
  }

  subscribe(listener: (event: LeadEvent) => void): () => void {
    this.on('event', listener);
    return () => this.off('event', listener);
  }

  snapshot(): LeadSnapshot {
    const tasks = this.board.tasks.list();
    const team = this.board.registry.shown();
    return buildSnapshot({
      board: { location: this.board.location, where: this.where, rootDir: this.rootDir, repository: this.repository?.top ?? null },
      tasks,
      problems: this.board.tasks.problems(),
      team,
      starting: this.team.starting(team.members),
      questions: this.pendingQuestions(),
      plans: waitingPlans(this.board.requests, this.board.tasks),
      spend: this.spend,
      models: this.models,
      roles: this.models.roleModels(this.team.roles()).roles,
      running: (name) => this.team.isRunning(name), resting: (name) => this.team.isResting(name),
      autoAnswer: this.auto,
    });
  }

  get where(): string {
    return boardWhere(this.board.location, this.rootDir);
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

  events(filter: EventFilter = {}, limit?: number): Promise<TeamEvent[]> {
    return this.board.log.read(filter, limit);
  }

  leader(): LeaderView {
    return leaderOf(this.board.lease().read());
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
    // A task whose plan waits is the person's, not work in flight; an approval waits for the queue (autoMerge, /merge all).
    const { members } = this.board.registry.read();
    return busyReason({ running: this.team.onCall(), stopped: this.team.fatalError !== null, unanswered: this.pendingQuestions().length > 0 && !this.auto, tasks: this.board.tasks, serving: this.team.servingRoles(members), awaiting: awaitingPlans(this.board.requests, this.board.tasks, members), problems: this.board.tasks.problems() }) ?? (this.merges.busy ? 'the merge queue is at work' : null);
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

  /** Dollars `tasks` cost at their roles' models' prices, or null when a model has no price or nothing was spent. */
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

  workSummary(ids: ReadonlySet<number>, since: string): Promise<TraceSummary> {
    return workSummary(this.trace.read(), this.board.log, this.board.tasks.list().filter((task) => ids.has(task.id)), since);
  }

  start(team: readonly TeamMemberSpec[] = DEFAULT_TEAM): Promise<void> {
    // What an earlier lead left approved and unmerged goes through the queue now (autoMerge).
    return this.life.start(team).then(() => this.merges.auto());
  }

  /**
   * Shows what the log holds beyond what was shown: this process's own events too, flushed to it
   * first; and reads the lead's inbox, so a question already sent is pending here.
   */
  async catchUp(): Promise<void> {
    if (!this.life.closed) await this.inbox.drained();
    await this.board.sink.flush().catch(() => undefined);
    // The ends the board holds now are what it waits for: read, not left to the next board event.
    await this.board.tasks.refresh().catch(() => undefined);
    return this.view.catchUp();
  }

  /** A lead agent of its own over this session (the one behind `ask` is the session's), for a caller in the core. */
  leadAgent(options: { maxTurns?: number; tokenBudget?: number } = {}): LeadAgent {
    return new LeadAgent(this.agentHost, options);
  }

  async ask(text: string): Promise<string> {
    // Typed while the team is still starting (the prompt is up from the first frame): answered once it has.
    await this.life.whenStarted();
    return (await this.chat.ask(text)).text;
  }

  spawn(name: string, role: string, prompt?: string): void {
    this.team.spawn(name, role, prompt);
  }

  requestShutdown(name: string, graceMs = 5_000): Promise<TeammateExit | null> {
    return this.team.requestShutdown(name, graceMs);
  }

  async requestShutdownElsewhere(name: string): Promise<string | null> {
    if (await this.team.keepDown(name)) return `${name} had idled out: it is not started again for work (/spawn starts it)`;
    const { team, members } = this.board.registry.read();
    const member = members.find((entry) => entry.name === name);
    if (!member) throw new UnknownRecipientError(name, team, members.map((entry) => entry.name));
    if (this.team.isRunning(name) || !runsNow(member)) return null;
    await askToShutDown(this.board.mailbox, this.board.requests, this.lead, name);
    return `asked ${name} (pid ${member.pid ?? '?'} on ${member.host ?? 'this host'}) to shut down: it finishes its turn, hands back any task and leaves`;
  }

  /**
   * Sends one teammate a message from the lead (/msg): it reads it between turns, or wakes for it when
   * idle. A name that is not on the team is refused with the team's members.
   */
  async message(name: string, text: string): Promise<Message> {
    await this.team.joined(name); // a script's first line may come while the teammate starts
    const { team, members } = this.board.registry.read();
    if (!members.some((member) => member.name === name)) throw new UnknownRecipientError(name, team, members.map((member) => member.name));
    const sent = await this.board.mailbox.send(this.lead, name, text, 'message');
    this.team.wake(name);
    return sent;
  }

  /** The task in hand finishes on the old model; a recording stays recording, a replay refuses (TeamModels.change). */
  setModel(role: string, model: ModelSpec | string): void {
    this.pipelines.stages.checkRole(role);
    const spec = typeof model === 'string' ? resolveModelChoice(model, process.env) : model;
    this.team.setModel(role, this.models.change(role, spec));
  }

  async post(requirement: string, startStage?: Stage, from?: string): Promise<Task> {
    if (startStage) this.pipelines.stages.checkStart(startStage);
    const task = await this.pipelines.post(requirement, { by: this.lead, numbered: this.foreign.numbered(from ?? null), ...(startStage ? { startStage } : {}) });
    const beside = this.options.repo === false ? null : remoteNotice(this.board.tasks.list(), [task]);
    if (beside) this.emit('event', { type: 'notice', text: beside });
    return task;
  }

  answer(text: string, questionId?: string, by: 'person' | 'simulated user' = 'person'): Promise<PendingQuestion> {
    return this.desk.answer(text, questionId, by);
  }

  cancel(pipeline: number, reason?: string): Promise<number[]> {
    // Its questions are withdrawn before the cancel is written: the asker, freed by that write, may ask
    // about its next task at once, and the log must say this one is withdrawn first.
    this.desk.withdrawCancelled(pipeline);
    return this.pipelines.cancel(pipeline, this.lead, reason);
  }

  retry(pipeline: number): Promise<Task> {
    return this.pipelines.retry(pipeline, this.lead);
  }

  diff(pipeline: number): Promise<string> {
    return diffPipeline(this.board.tasks, pipeline);
  }

  merge(pipeline: number, options: HandMerge = {}): Promise<string> {
    return mergePipeline(this.board.tasks, pipeline, this.lead, this.merges.byHand(options));
  }

  discard(pipeline: number, options: HandMerge = {}): Promise<string> {
    return discardPipeline(this.board.tasks, pipeline, this.lead, this.merges.byHand(options));
  }

  mergeQueue(onLine?: (line: string) => void): Promise<string[]> {
    return this.merges.run(onLine);
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
  async close(graceMs = 5_000): Promise<{ exits: TeammateExit[]; released: number[] }> {
    // A merge under way finishes first: a rebase is never left half-done in a worktree.
    await this.merges.close();
    return this.life.close(graceMs);
  }

  /** Reads the lead's inbox now (it is read on every watcher event and reconcile tick anyway). */
  drainInbox(): void {
    if (!this.life.closed) this.inbox.drain();
  }
}

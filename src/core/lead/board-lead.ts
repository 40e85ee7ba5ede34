import { EventEmitter } from 'node:events';
import type { Board, BoardEvents } from '../board/board.js';
import { goneReason, HOST, type LeadRecord } from '../board/liveness.js';
import type { Stage, Task } from '../board/schemas.js';
import type { RepositorySettings } from '../git/remote-branch.js';
import type { Repository } from '../git/worktree.js';
import { AutoteamError, serializeError } from '../errors.js';
import type { EventFilter, TeamEvent } from '../events/schema.js';
import { Pipeline, type PipelineState } from '../stages/pipeline.js';
import type { StageRegistry } from '../stages/stage-registry.js';
import { diffPipeline, discardPipeline, mergePipeline } from './branches.js';
import { decidePlan, waitingPlans } from './lead-inbox.js';
import { MergeQueue, recheckLimits } from './merge-queue.js';
import type { HandMerge, LeadControls, LeaderView, LeadSnapshot } from './lead-api.js';
import { noteAnswer, type PendingQuestion, unansweredOnBoard } from './questions.js';
import { openRepository } from './repository.js';
import type { LeadEvent } from './session-types.js';
import { buildSnapshot } from './snapshot.js';
import type { MemberSpend } from './spend.js';
import { waitForPipeline } from './waiting.js';

export interface BoardLeadOptions {
  /** The project's stages (autoteam.config.json); the built-in ones when absent. */
  stages?: StageRegistry;
  maxRevisions?: number;
  /** As the lead's `--repo`: where posted pipelines get their worktree (false: none). */
  repo?: string | false;
  /** `repository.remote`: posted pipelines branch on this remote instead. */
  repository?: RepositorySettings;
  /** How often the board is read again without a change event. */
  reconcileMs?: number;
}

/** The board as headers show it: its directory, or its URL (no password) and the local folder. */
export function boardWhere(location: string, rootDir: string): string {
  return location === rootDir ? rootDir : `${location} (local folder ${rootDir})`;
}

/** Who leads a board, from its lease record. */
export function leaderOf(record: LeadRecord | null, nowMs = Date.now()): LeaderView {
  if (!record || goneReason(record, nowMs) !== null) return { state: 'none', pid: null, host: null, since: null };
  const here = record.pid === process.pid && record.host === HOST;
  return { state: here ? 'here' : 'elsewhere', pid: record.pid, host: record.host, since: record.startedAt };
}

/**
 * The repository choice of a poster beside the board's lead: as given (`--repo`, `--no-worktree`,
 * a remote), else as a live lead started with --no-worktree posts — in workspace/<n>, said once.
 */
export function repoBesideLead(leader: LeadRecord | null, repo: string | false | undefined, remote: RepositorySettings | undefined, notice: (text: string) => void): string | false | undefined {
  if (repo !== undefined || remote || leader?.worktrees !== false || leaderOf(leader).state === 'none') return repo;
  notice('the lead on this board was started with --no-worktree: these pipelines work in workspace/<n> as its own do (--repo gives them a worktree and branch)');
  return false;
}

/**
 * A board as a person acts on it from outside the team: what `autoteam web` and `autoteam mcp serve`
 * run on when they are not the lead. It takes no lease and runs no teammate, so it works beside a
 * lead in another process (or workers, or nobody). What it shows is the board's own record — tasks,
 * the team registry, questions asked and not answered, plan requests, the event log — and what it
 * does is what the CLI's board commands do, as the lead named in the registry.
 */
export class BoardLead implements LeadControls {
  private readonly emitter = new EventEmitter<{ event: [LeadEvent] }>();
  private readonly pipelines: Pipeline;
  private readonly watcher: BoardEvents;
  private readonly following = new AbortController();
  /** Questions answered (here, or in the log) that the board may not yet record as answered. */
  private readonly answered = new Set<string>();
  /** Questions shown, so a new one is told once. */
  private shownQuestions = new Set<string>();
  /** The person's checkout the board's pipelines branch from, once `start` found it. */
  private repositoryTop: string | null = null;
  /** Each member's spend, model and role, from the log's model calls. */
  private readonly spent = new Map<string, { spend: MemberSpend; model: string; role: string | undefined }>();

  constructor(
    private readonly board: Board,
    private readonly options: BoardLeadOptions = {},
  ) {
    this.pipelines = new Pipeline(board.tasks, board.mailbox, { events: board.sink, ...(options.stages ? { stages: options.stages } : {}), ...(options.maxRevisions ? { maxRevisions: options.maxRevisions } : {}) });
    this.watcher = board.events({ reconcileMs: options.reconcileMs ?? 1_000 });
    // Web feeds, MCP sessions and one wait per pipeline each subscribe: many listeners are the design.
    this.emitter.setMaxListeners(0);
  }

  /** Reads what the log has spent so far, then follows the board and its log. */
  async start(): Promise<void> {
    // One read of the log: what it has spent so far, and where following it starts.
    const past = await this.board.log.read();
    const end = past.at(-1)?.seq ?? 0;
    for (const event of past) {
      this.count(event);
      noteAnswer(this.answered, event);
    }
    const repository = await this.repository();
    this.repositoryTop = repository?.top ?? null;
    this.watcher.on('board', () => this.changed());
    this.watcher.on('error', (error: Error) => this.tell({ type: 'error', ...serializeError(error) }));
    await this.watcher.start();
    this.shownQuestions = new Set(this.pendingQuestions().map((question) => question.questionId));
    void this.board.log
      .subscribe({ since: end }, (event) => this.heard(event), this.following.signal)
      .catch((error: unknown) => this.tell({ type: 'error', code: serializeError(error).code, message: `event log: ${serializeError(error).message}` }));
  }

  async close(): Promise<void> {
    this.following.abort();
    this.emitter.removeAllListeners();
    await this.watcher.close();
  }

  subscribe(listener: (event: LeadEvent) => void): () => void {
    this.emitter.on('event', listener);
    return () => this.emitter.off('event', listener);
  }

  get lead(): string {
    return this.board.registry.read().lead;
  }

  get where(): string {
    return boardWhere(this.board.location, this.board.rootDir);
  }

  snapshot(): LeadSnapshot {
    const tasks = this.board.tasks.list();
    const spend = {
      of: (name: string) => this.spent.get(name)?.spend ?? NOTHING,
      total: () => [...this.spent.values()].reduce((sum, entry) => addSpend(sum, entry.spend), NOTHING),
      byMember: () => Object.fromEntries([...this.spent].map(([name, entry]) => [name, entry.spend])),
    };
    // Another process runs the team on models this one does not know: the log's model calls name them.
    const modelOf = (role: string) => [...this.spent.values()].findLast((entry) => entry.role === role)?.model ?? 'unknown here';
    const models = { label: 'as the team\'s processes run them', ids: '', offline: false, fallback: 'unknown here', of: modelOf, costOf: () => null };
    const team = this.board.registry.read();
    return buildSnapshot({
      board: { location: this.board.location, where: this.where, rootDir: this.board.rootDir, repository: this.repositoryTop },
      tasks,
      problems: this.board.tasks.problems(),
      team,
      questions: this.pendingQuestions(),
      plans: waitingPlans(this.board.requests, this.board.tasks),
      spend,
      models,
      roles: [...new Set(team.members.map((member) => member.role))].map((role) => ({ role, model: modelOf(role) })),
      running: () => false,
      autoAnswer: false,
      leader: this.leader(),
    });
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

  /** Questions the board records as asked and not answered, less those answered since. */
  pendingQuestions(): PendingQuestion[] {
    const open = unansweredOnBoard(this.board.tasks.list());
    const ids = new Set(open.map((question) => question.questionId));
    for (const id of this.answered) if (!ids.has(id)) this.answered.delete(id);
    return open.filter((question) => !this.answered.has(question.questionId));
  }

  events(filter: EventFilter = {}, limit?: number): Promise<TeamEvent[]> {
    return this.board.log.read(filter, limit);
  }

  leader(): LeaderView {
    return leaderOf(this.board.lease().read());
  }

  async post(requirement: string, startStage?: Stage): Promise<Task> {
    if (startStage) this.pipelines.stages.checkStart(startStage);
    // One post at a time: each takes the repository choice of the moment (repoBesideLead) for its own.
    const posted = this.posting.then(async () => {
      this.pipelines.useRepository(await this.repository());
      return this.pipelines.post(requirement, { by: this.lead, ...(startStage ? { startStage } : {}) });
    });
    this.posting = posted.catch(() => undefined);
    return posted;
  }

  private posting: Promise<unknown> = Promise.resolve();
  /** The repository opened for each choice (a worktree per pipeline, or none), opened once each. */
  private readonly repositories = new Map<string | false | undefined, Promise<Repository | null>>();

  /** The repository for a post now: as the lead on the board posts (a lead may start or leave while this runs). */
  private repository(): Promise<Repository | null> {
    const repo = repoBesideLead(this.board.lease().read(), this.options.repo, this.options.repository, () => undefined);
    let opened = this.repositories.get(repo);
    if (!opened) {
      opened = openRepository(repo, this.board.rootDir, () => undefined, this.options.repository);
      this.repositories.set(repo, opened);
      opened.catch(() => this.repositories.delete(repo));
    }
    return opened;
  }

  /** Sends the answer to the teammate that asked, as the lead's: it takes an answer from anyone. */
  async answer(text: string, questionId?: string): Promise<PendingQuestion> {
    const pending = this.pendingQuestions();
    const question = questionId ? pending.find((candidate) => candidate.questionId === questionId) : pending[0];
    if (!question) throw new AutoteamError(questionId ? `no pending question '${questionId}'` : 'no question is waiting for an answer', 'NO_QUESTION');
    if (!text.trim()) throw new AutoteamError('an answer needs some text', 'USAGE');
    const lead = this.lead;
    // An answer that cannot reach its asker (a team config broken by hand) is refused before anything is recorded: the question stays open.
    this.board.mailbox.deliverable(question.from);
    // In the log before the asker can read the answer, as the lead's own desk does it: a lead beside
    // this one learns the question is answered before it sees the task the answer lets finish.
    this.board.sink.emit({ type: 'question_answered', pipeline: question.pipeline, task: question.task, agent: lead, questionId: question.questionId, answer: text, by: 'person', asker: question.from });
    await this.board.sink.flush();
    try {
      await this.board.mailbox.send(lead, question.from, text, 'answer', { questionId: question.questionId, task: question.task, answeredBy: 'person' });
    } catch (error) {
      this.board.sink.emit({ type: 'question_withdrawn', pipeline: question.pipeline, task: question.task, agent: question.from, questionId: question.questionId, reason: `the answer could not be delivered: ${serializeError(error).message}` });
      throw error;
    }
    this.answered.add(question.questionId);
    this.tell({ type: 'answered', question, answer: text, by: 'person' });
    return question;
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

  merge(pipeline: number, options: HandMerge = {}): Promise<string> {
    return mergePipeline(this.board.tasks, pipeline, this.lead, { ...options, signal: this.following.signal });
  }

  discard(pipeline: number, options: HandMerge = {}): Promise<string> {
    return discardPipeline(this.board.tasks, pipeline, this.lead, { ...options, signal: this.following.signal });
  }

  mergeQueue(onLine?: (line: string) => void): Promise<string[]> {
    return new MergeQueue({ board: this.board, pipelines: this.pipelines, by: this.lead, limits: recheckLimits(), ...(onLine ? { onLine } : {}), ...(this.options.repository ? { remoteUrl: this.options.repository.remote } : {}) }).drain();
  }

  decidePlan(requestId: string, approve: boolean, feedback = ''): Promise<void> {
    return decidePlan(this.board, this.lead, requestId, approve, feedback);
  }

  waitForPipeline(id: number, signal?: AbortSignal): Promise<PipelineState> {
    return waitForPipeline(this, id, signal);
  }

  /** The board changed: told, with the questions asked since. */
  private changed(): void {
    const pending = this.pendingQuestions();
    for (const question of pending) if (!this.shownQuestions.has(question.questionId)) this.tell({ type: 'question', question });
    this.shownQuestions = new Set(pending.map((question) => question.questionId));
    this.tell({ type: 'board' });
  }

  private heard(event: TeamEvent): void {
    if (event.type === 'model_call') this.count(event);
    noteAnswer(this.answered, event);
    this.tell({ type: 'team', event });
  }

  private count(event: TeamEvent): void {
    if (event.type !== 'model_call' || !event.agent) return;
    const before = this.spent.get(event.agent)?.spend ?? NOTHING;
    const spend = addSpend(before, { calls: 1, inputTokens: event.inputTokens, outputTokens: event.outputTokens, cacheReadTokens: event.cacheReadTokens, cost: event.costUsd });
    this.spent.set(event.agent, { spend, model: event.model, role: event.role });
  }

  private tell(event: LeadEvent): void {
    this.emitter.emit('event', event);
  }
}

const NOTHING: MemberSpend = { calls: 0, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cost: 0 };

function addSpend(a: MemberSpend, b: MemberSpend): MemberSpend {
  return {
    calls: a.calls + b.calls,
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cacheReadTokens: a.cacheReadTokens + b.cacheReadTokens,
    cost: a.cost === null || b.cost === null ? null : a.cost + b.cost,
  };
}

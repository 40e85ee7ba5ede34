import type { Board, BoardEvents } from '../board/board.js';
import type { LeadLease } from '../board/liveness.js';
import type { TeammateExit } from '../agent/manager.js';
import { FileEventLog } from '../events/file-log.js';
import type { EventLog } from '../events/log.js';
import { sweepScratch } from '../exec/scratch.js';
import type { Repository } from '../git/worktree.js';
import { createModel } from '../model/factory.js';
import type { ModelClient } from '../model/types.js';
import type { Pipeline } from '../stages/pipeline.js';
import { attachTelemetry } from '../telemetry/attach.js';
import type { LeadChat } from './lead-chat.js';
import type { LeadInbox } from './lead-inbox.js';
import type { LeadTeam } from './lead-team.js';
import { type LogView, unlogged } from './log-view.js';
import type { QuestionDesk } from './question-desk.js';
import { type PendingQuestion, questionsInLog, unansweredOnBoard } from './questions.js';
import { AUTO_MERGE_WITHOUT_BRANCHES, openRepository } from './repository.js';
import type { LeadEvent, LeadSessionOptions, TeamMemberSpec } from './session-types.js';
import { createAnswerer } from './simulated-user.js';

/** The parts of a session that starting and closing it set up and stop, in that order. */
export interface LifeParts {
  board: Board;
  watcher: BoardEvents;
  view: LogView;
  team: LeadTeam;
  desk: QuestionDesk;
  inbox: LeadInbox;
  chat: LeadChat;
  lease: LeadLease;
  pipelines: Pipeline;
  rootDir: string;
  options: Pick<LeadSessionOptions, 'team' | 'repo' | 'model' | 'settings' | 'autoMerge'>;
}

/** What the session hears from its start. */
export interface LifeHost {
  lead(): string;
  emit(event: LeadEvent): void;
  /** The person's repository (or none), once found. */
  useRepository(repository: Repository | null): void;
  /** The lead's model, once made. */
  useModel(model: ModelClient): void;
  drainInbox(): void;
}

/**
 * How a lead session starts (the board's lead lease, the log view, telemetry, the repository, the
 * model, the watcher, the team) and closes (the team's shutdown, then each part stopped, every step
 * run even when one fails).
 */
export class SessionLife {
  /** Set once the session closed (or its start failed): nothing is emitted or drained after. */
  closed = false;
  /** The team's start while it runs: a close waits for it. */
  private starting: Promise<void> | null = null;
  /**
   * The whole start() (the lease, then the team), settled either way: what whenStarted() waits for.
   * Not `starting`, which a failed start's own close must not wait for.
   */
  private startCall: Promise<void> | null = null;
  private closing: Promise<{ exits: TeammateExit[]; released: number[] }> | null = null;
  /** Whether a failed span export was told (once per session: every thread exports its own). */
  private telemetryTold = false;
  /** Stops this process's span export (OTEL_EXPORTER_OTLP_ENDPOINT), flushing it. */
  private detachTelemetry: () => Promise<void> = async () => undefined;
  /** Stops telling of a file log that cannot be written. */
  private stopUnlogged: () => void = () => undefined;

  constructor(
    private readonly parts: LifeParts,
    private readonly host: LifeHost,
  ) {}

  /** Settles once start() has (at once when it was never called); never rejects. */
  whenStarted(): Promise<void> {
    return this.startCall ?? Promise.resolve();
  }

  start(team: readonly TeamMemberSpec[]): Promise<void> {
    // The team is listed as starting from now, though its threads are spawned only after the lease,
    // the model and the watcher: a /team typed meanwhile (the ink prompt is up at once) lists it.
    this.parts.team.willStart(team);
    const call = this.startOnce(team).catch((error: unknown) => {
      this.parts.team.willStart([]);
      throw error;
    });
    this.startCall = call.catch(() => undefined);
    return call;
  }

  private async startOnce(team: readonly TeamMemberSpec[]): Promise<void> {
    const tookOver = await this.parts.lease.acquire(this.parts.options.repo === false ? { worktrees: false } : {});
    if (tookOver) {
      const { from, why } = tookOver;
      this.host.emit({ type: 'notice', text: `took over the board from a lead that is gone (pid ${from.pid} on ${from.host}: ${why})` });
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
    const { board, view, watcher, options, desk, pipelines } = this.parts;
    await view.start();
    this.detachTelemetry = await attachTelemetry({ sink: board.sink, log: board.log }, (error) => this.telemetryError(error.message), { probe: true });
    // A file log that cannot be written is said, once a streak, whoever opened the board (the REPL, `run`).
    if (board.log instanceof FileEventLog) this.stopUnlogged = board.sink.onFailure((error) => this.host.emit(unlogged(this.parts.rootDir, error)));
    await board.registry.ensure(options.team);
    const repository = await openRepository(options.repo, this.parts.rootDir, (text) => this.host.emit({ type: 'notice', text }), options.settings?.repository, { instructions: options.settings?.agentsMd?.enabled !== false });
    this.host.useRepository(repository);
    pipelines.useRepository(repository);
    // Merging is of branches: with none, the setting would do nothing without a word.
    if (options.autoMerge && !repository) this.host.emit({ type: 'notice', text: AUTO_MERGE_WITHOUT_BRANCHES });
    await this.parts.team.reapDead();
    // Scratch copies (check runs, smoke runs) of autoteam processes killed before they could remove them.
    sweepScratch();
    const model = await createModel(options.model);
    this.host.useModel(model);
    // With --auto, a question the last lead left pending is answered now. One asked since the view
    // started (a worker's analyst, as this session started) is this session's, which the log shows.
    const unanswered = unansweredOnBoard(board.tasks.list());
    const { answered, askedNow } = await questionsInLog(board.log, unanswered, view.startSeq);
    desk.open(
      createAnswerer(model, board.tasks, board.sink, options.settings?.prices),
      unanswered.filter((question) => !answered.has(question.questionId)),
      (question) => !askedNow.has(question.questionId),
    );
    watcher.on('inbox', (name) => {
      if (name === this.host.lead()) this.host.drainInbox();
    });
    watcher.on('board', () => {
      this.host.emit({ type: 'board' });
      desk.withdrawStale();
      // The reconcile tick doubles as the inbox poll: a lost watcher event costs at most a second.
      this.host.drainInbox();
    });
    this.parts.team.listen(watcher);
    await watcher.start();
    this.parts.team.keepUp(pipelines);
    for (const { name, message } of this.parts.team.spawnTeam(team)) this.host.emit({ type: 'notice', text: `${name} not started: ${message}` });
    this.host.drainInbox();
  }

  /** A span export that failed, in this process or a teammate's thread: told once, the team works on. */
  telemetryError(message: string): void {
    if (this.telemetryTold) return;
    this.telemetryTold = true;
    this.host.emit({ type: 'error', code: 'TELEMETRY', message: `${message} (said once; the team works on without traces)` });
  }

  close(graceMs: number): Promise<{ exits: TeammateExit[]; released: number[] }> {
    this.closing ??= this.closeOnce(graceMs);
    return this.closing;
  }

  private async closeOnce(graceMs: number): Promise<{ exits: TeammateExit[]; released: number[] }> {
    const { board, view, watcher, inbox, lease } = this.parts;
    this.parts.chat.cancel();
    // A quit while the team is still starting waits for it: what the start sets up (the watcher, the
    // timers) is then there to be stopped, instead of starting after the close and living on.
    await this.starting?.catch(() => undefined);
    // Every step runs even when one fails (a full disk): the threads must end, or the process never does.
    const attempt = async <T>(fn: () => Promise<T>, fallback: T): Promise<T> => fn().catch(() => fallback);
    const { exits, released } = await this.parts.team.close(graceMs);
    await attempt(() => watcher.close(), undefined);
    // The teammates' last words (shutdown responses) are taken now; nothing is emitted after close.
    await inbox.close(!this.closed);
    this.closed = true;
    await attempt(() => board.sink.flush(), undefined);
    this.stopUnlogged();
    // What the team wrote last (its threads' farewells) is shown before the session goes quiet.
    await attempt(() => view.catchUp(), undefined);
    view.stop();
    await attempt(() => this.detachTelemetry(), undefined);
    await attempt(() => lease.release(), undefined);
    return { exits, released };
  }
}

import fs from 'node:fs';
import path from 'node:path';
import { Mailbox } from '../board/mailbox.js';
import { RequestStore } from '../board/requests.js';
import type { MemberStatus, Message, Task } from '../board/schemas.js';
import type { BlobStore } from '../board/blobs.js';
import { type Board, fileBoard } from '../board/board.js';
import type { TaskBoardLike } from '../board/task-rules.js';
import { TeamRegistry } from '../board/team-registry.js';
import type { LeadLease } from '../board/liveness.js';
import { claimNextAs } from './any-role.js';
import { FATAL_MODEL_CODES, ModelError, serializeError } from '../errors.js';
import type { ModelClient, ModelMessage } from '../model/types.js';
import { StageRegistry } from '../stages/stage-registry.js';
import { Pipeline } from '../stages/pipeline.js';
import { localGit } from '../stages/workspace.js';
import { formatMessages } from '../tools/read-inbox.js';
import { warmRoleTools } from '../tools/registry.js';
import type { ToolContext } from '../tools/tool.js';
import { secretValues } from '../trace/redact.js';
import { Trace } from '../trace/trace.js';
import { identityMessages } from './identity.js';
import { redactEvent, type TeammateEvent } from './teammate-events.js';
export type { TeammateEvent } from './teammate-events.js';
import { type MailHint, TeammateInbox } from './teammate-inbox.js';
import { TaskEnds } from './task-ends.js';
import { TaskOutcome } from './task-outcome.js';
import { TaskWork } from './task-work.js';
import { TeammateStatus } from './teammate-status.js';
import { TeammateTurns } from './teammate-turns.js';
import { type ToolHost, toolContext } from './tool-context.js';
import { DEFAULT_TEAMMATE_SETTINGS, type TeammateSettings } from './settings.js';
import type { Wake } from './wake.js';
import type { ExitReason } from '../events/schema.js';
import type { EventSink } from '../events/emitter.js';
import { type HookScene, TeammateHooks } from './teammate-hooks.js';
import { hiddenStartDir } from '../exec/sandbox.js';
import type { McpToolbox } from '../mcp/toolbox.js';
import { RepositoryInstructions } from './repository-instructions.js';

export interface TeammateOptions {
  name: string;
  role: string;
  rootDir: string;
  model: ModelClient;
  wake: Wake;
  /** Told of each message for it by its host: its inbox is read only then, or after a poll's interval (MailHint). */
  mail?: MailHint;
  /** Aborting it stops the teammate: the model call is cancelled and the task handed back. */
  signal: AbortSignal;
  prompt?: string;
  settings?: Partial<TeammateSettings>;
  emit?: (event: TeammateEvent) => void;
  now?: () => Date;
  /** The stages it works (default: the built-in ones with `settings.stages`, as every thread builds them). */
  stages?: StageRegistry;
  /** The board, opened by the host (default: the file board in `rootDir`). */
  board?: Board;
  /** Fields for every message the default file board's mailbox sends (see EventCounter). */
  stamp?: () => Record<string, unknown>;
  /**
   * When this teammate was started (default: when it is made). A shutdown request sent before then was
   * for an earlier teammate of the name (a session that ended before they read it): dropped, not obeyed.
   */
  startedAt?: Date;
}

/**
 * One autonomous teammate: IDLE (inbox first, then claim a task of its role, else sleep until woken
 * or polled) and WORK (the tool loop on one task, its lease renewed by the runtime).
 */
export class Teammate {
  readonly board: TaskBoardLike;
  readonly mailbox: Mailbox;
  readonly registry: TeamRegistry;
  private readonly lease: LeadLease;
  readonly requests: RequestStore;
  readonly blobs: BlobStore;
  readonly trace: Trace;
  readonly pipeline: Pipeline;
  /** The stages of autoteam.config.json, the same in every thread of the team. */
  readonly stages: StageRegistry;
  /** This thread's way onto the board's event log. */
  private readonly sink: EventSink;
  /** The board's event log and this thread's sink, for what the host attaches (telemetry). */
  readonly events: Pick<Board, 'sink' | 'log'>;
  private readonly hooks: TeammateHooks;
  /** How its work on a task ends when it does not hand the task on (failed, or backed off). */
  private readonly ends: TaskEnds;
  private readonly status: TeammateStatus;
  private readonly settings: TeammateSettings;
  private readonly now: () => Date;
  private exitReason: string | null = null;
  private exitWhy: ExitReason | null = null;
  private readonly inbox: TeammateInbox;
  /** One run of the tool loop, set up for this teammate (tools, system prompt, usage, hooks). */
  private readonly turns: TeammateTurns;
  /** What its tools are lent: who it is, its board, how it reports. */
  private readonly tools: ToolHost;
  /** WORK on a claimed task. */
  private readonly work: TaskWork;
  /** Its MCP servers (started on first need, stopped when it stops), or null when none is offered to its role. */
  /** Its MCP servers, made (and the SDK loaded) the first time a task needs them; null when its role has none. */
  private readonly mcp: (() => Promise<McpToolbox>) | null;
  private mcpMade: Promise<McpToolbox> | null = null;
  private model: ModelClient;
  /** The environment's secret values, read once: everything it tells its host is redacted with them. */
  private readonly secrets = secretValues();
  /** A model the lead chose for this teammate's next tasks (/model), taken between tasks. */
  private nextModel: Promise<ModelClient> | null = null;

  constructor(private readonly options: TeammateOptions) {
    this.now = options.now ?? (() => new Date());
    this.model = options.model;
    this.settings = {
      ...DEFAULT_TEAMMATE_SETTINGS,
      ...options.settings,
      runtime: { ...DEFAULT_TEAMMATE_SETTINGS.runtime, ...options.settings?.runtime },
      sandbox: { ...DEFAULT_TEAMMATE_SETTINGS.sandbox, ...options.settings?.sandbox },
      agentsMd: { ...DEFAULT_TEAMMATE_SETTINGS.agentsMd, ...options.settings?.agentsMd },
    };
    this.stages = options.stages ?? StageRegistry.from(this.settings.stages);
    const board = options.board ?? fileBoard(options.rootDir, { now: this.now, leaseMs: this.settings.leaseMs, maxInboxBytes: this.settings.maxInboxBytes, ...(options.stamp ? { stamp: options.stamp } : {}) });
    this.board = board.tasks;
    this.mailbox = board.mailbox;
    this.registry = board.registry;
    this.lease = board.lease();
    this.requests = board.requests;
    this.blobs = board.blobs;
    this.sink = board.sink;
    this.events = board;
    this.hooks = new TeammateHooks(this.settings.hooks, this.board.rootDir, this.sink, this.stages);
    this.trace = new Trace(options.rootDir, this.now);
    this.pipeline = new Pipeline(this.board, this.mailbox, { maxRevisions: this.settings.runtime.maxRevisions, trace: this.trace, events: this.sink, hooks: this.settings.hooks, stages: this.stages });
    this.status = new TeammateStatus({ name: options.name, role: options.role }, { registry: this.registry, trace: this.trace, sink: this.sink, emit: (event) => this.emit(event) });
    this.ends = new TaskEnds({
      board: this.board,
      pipeline: this.pipeline,
      settings: this.settings,
      now: this.now,
      activity: (task, text) => this.activity(task, text),
    });
    this.mcp = this.mcpToolbox();
    this.inbox = new TeammateInbox(options.name, this.mailbox, this.requests, options.wake, this.settings.pollMs, (options.startedAt ?? this.now()).getTime(), options.mail);
    this.tools = {
      name: options.name,
      role: options.role,
      settings: this.settings,
      board: this.board,
      registry: this.registry,
      requests: this.requests,
      blobs: this.blobs,
      mailbox: this.mailbox,
      inbox: this.inbox,
      activity: (taskId, line) => this.activity(taskId, line),
      emit: (input) => this.sink.emit(input),
      setStatus: (status, taskId, reason) => this.setStatus(status, taskId, reason),
      secrets: this.secrets,
    };
    const host = {
      name: options.name,
      settings: this.settings,
      board: this.board,
      stages: this.stages,
      hooks: this.hooks,
      signal: options.signal,
      identity: () => this.identity(),
      scene: (ctx: Pick<ToolContext, 'task' | 'workspace'>) => this.scene(ctx),
      note: (task: Task | null, text: string) => this.note(task, text),
      activity: (task: number | null, text: string) => this.activity(task, text),
    };
    this.turns = new TeammateTurns({
      ...host,
      role: options.role,
      ...(options.prompt ? { prompt: options.prompt } : {}),
      inbox: this.inbox,
      mcp: this.mcp,
      trace: this.trace,
      sink: this.sink,
      model: () => this.model,
      emit: (event) => this.emit(event),
      exitWith: (reason, why) => this.exitWith(reason, why),
    });
    const outcome = new TaskOutcome({
      ...host,
      pipeline: this.pipeline,
      ends: this.ends,
      exitWith: (reason, why) => this.exitWith(reason, why),
      workOnClaimed: (task) => this.workOnTask(task),
    });
    this.work = new TaskWork({
      ...host,
      blobs: this.blobs,
      tools: this.tools,
      modelError: (ctx, error) => this.onModelError(ctx, error),
      postStatus: (status, task, reason) => this.status.post(status, task, reason),
      instructions: (task: Task) => this.instructionsFor(task),
    }, this.turns, this.hooks, outcome, this.ends);
  }

  get name(): string {
    return this.options.name;
  }

  get role(): string {
    return this.options.role;
  }

  /** Works the next tasks on `next` (a model being made); the task in hand finishes on the old one. */
  useModel(next: Promise<ModelClient>): void {
    // One that cannot be made is reported when the swap is due, not as an unhandled rejection now.
    next.catch(() => undefined);
    this.nextModel = next;
  }

  private async swapModel(): Promise<void> {
    const next = this.nextModel;
    if (!next) return;
    this.nextModel = null;
    try {
      this.model = await next;
      this.note(null, `now on ${this.model.label}`);
      void this.model.warm?.().catch(() => undefined);
    } catch (error) {
      this.emit({ type: 'error', name: this.options.name, error: serializeError(error) });
    }
  }

  /** Runs until shutdown (protocol, idle timeout, abort or a fatal model error); returns why it stopped. */
  async run(): Promise<string> {
    const { name, role, signal } = this.options;
    await this.status.join(this.board);
    this.sink.emit({ type: 'teammate_spawned', agent: name, role, model: this.model.id });
    await this.setStatus('idle', null, 'looking for work');
    // While it waits for its first task, it loads what its tools' first runs and its first request would.
    void Promise.all([warmRoleTools(role, this.stages), this.model.warm?.()]).catch(() => undefined);
    const stopBeating = this.status.beat(this.settings.heartbeatMs);
    let idleSince = Date.now();
    /** The stage of the task just finished: the person's TeammateIdle hooks run once after work, not on every poll. */
    let justWorked: { stage: string | null } | null = null;
    while (!signal.aborted && this.exitReason === null) {
      try {
        await this.swapModel();
        const { exit, conversation } = await this.inbox.whileIdle();
        if (exit) {
          this.exitWith(exit, 'shutdown_requested');
          break;
        }
        // Idle from the end of the work, however it ended: one that threw was no idle time either.
        const worked = () => (idleSince = Date.now());
        if (conversation.length > 0) {
          await this.workOnMessages(conversation).finally(worked);
          continue;
        }
        await this.ends.settle(signal); // an end the board could not take (an outage) first: its task is claimable again
        const claim = await claimNextAs(name, role, this.board, this.registry, this.lease);
        if (claim?.ok) {
          await this.workOnTask(claim.task).finally(worked);
          justWorked = { stage: claim.task.stage };
          continue;
        }
        // Idle once no task waits: work that finds the next task waiting goes on without an idle between.
        this.status.foundNothing();
        if (justWorked && this.hooks.active) {
          // A block keeps it at work: the reason comes in as a message, and it takes another turn.
          const blocked = await this.hooks.teammateIdle(this.scene({ task: null, workspace: this.board.rootDir }), justWorked.stage, signal);
          justWorked = null;
          if (blocked) {
            await this.workOnMessages([{ id: `hook-${Date.now()}`, type: 'message', from: 'hook', to: name, content: blocked, at: this.now().toISOString() }]).finally(worked);
            continue;
          }
        }
        if (this.settings.idleTimeoutMs > 0 && Date.now() - idleSince >= this.settings.idleTimeoutMs) {
          const ms = this.settings.idleTimeoutMs;
          this.exitWith(`idle for ${ms < 1000 ? `${ms} ms` : `${Math.round(ms / 1000)} s`}`, 'idle_timeout');
          break;
        }
        const remaining = this.settings.idleTimeoutMs > 0 ? this.settings.idleTimeoutMs - (Date.now() - idleSince) : Infinity;
        await this.options.wake.wait(Math.min(this.settings.pollMs, remaining), signal);
      } catch (error) {
        // A failure while idle (a bad team config, a full disk) is reported and retried, not fatal.
        const serialized = serializeError(error);
        this.emit({ type: 'error', name, error: serialized });
        this.trace.write({ kind: 'error', agent: name, code: serialized.code, message: serialized.message });
        await this.options.wake.wait(this.settings.pollMs, signal);
      }
    }
    stopBeating();
    // Its MCP servers stop with it (a server that will not stop is killed with its whole tree).
    await this.mcpMade?.then((toolbox) => toolbox.close()).catch(() => undefined);
    await Promise.all([this.inbox.putBack(), this.ends.settle().catch(() => undefined)]); // mail put back, and one more try of owed ends
    const reason = this.exitReason ?? (signal.aborted ? 'stopped' : 'shutdown');
    const why = this.exitWhy ?? 'stopped';
    await this.setStatus('shutdown', null, reason).catch(() => undefined);
    this.sink.emit({ type: 'teammate_exited', agent: name, role, kind: 'left', why, reason });
    await this.sink.flush();
    this.emit({ type: 'exit', name, reason, why });
    return reason;
  }

  private workOnTask(task: Task): Promise<void> {
    return this.work.workOn(task);
  }

  private async workOnMessages(messages: Message[]): Promise<void> {
    await this.setStatus('working', null, 'reading messages');
    const workspace = path.join(this.board.rootDir, 'workspace', 'general');
    fs.mkdirSync(workspace, { recursive: true });
    const ctx = toolContext(this.tools, { task: null, fence: null, workspace, signal: this.options.signal, onFenceLost: () => undefined });
    const prompt = `You have new messages:\n${formatMessages(messages)}\n\nAct on them if needed, then stop.`;
    const conversation: ModelMessage[] = [...this.identity(), { role: 'user', content: prompt }];
    let claimed: Task | null = null;
    try {
      const { outcome } = await this.turns.run(ctx, conversation, prompt, Math.min(5, this.settings.maxTurns));
      if (outcome.kind === 'exit') this.exitWith(outcome.reason, 'shutdown_requested');
      if (outcome.kind === 'claimed') claimed = outcome.task;
    } catch (error) {
      await this.onModelError(ctx, error);
    }
    if (claimed && this.exitReason === null) {
      await this.workOnTask(claimed);
      return;
    }
    if (this.exitReason === null) await this.setStatus('idle', null, 'looking for work');
  }

  /** The MCP servers of autoteam.config.json offered to this teammate's role, or null. */
  private mcpToolbox(): (() => Promise<McpToolbox>) | null {
    const servers = this.settings.mcpServers ?? {};
    const { name, role } = this.options;
    if (!Object.values(servers).some((spec) => spec.roles.includes(role))) return null;
    // Loaded on first use: a thread pays for the MCP SDK (about 13 MB) only when a server is offered.
    return () => (this.mcpMade ??= import('../mcp/toolbox.js').then(({ McpToolbox }) => new McpToolbox({
      servers,
      agent: { name, role },
      rootDir: this.board.rootDir,
      hidden: [this.board.rootDir, ...hiddenStartDir()],
      policy: this.settings.sandbox,
      roleStages: this.stages.all().filter((stage) => role === 'any' || stage.role === role).map((stage) => stage.stage),
      emit: (input) => this.sink.emit(input),
    })));
  }

  /** The repository's AGENTS.md files for a task on a worktree, each use told as a `repository_instructions` event. */
  private instructionsFor(task: Task): RepositoryInstructions | null {
    const { enabled, maxBytes } = this.settings.agentsMd;
    const git = task.artifacts.git;
    if (!enabled || !git) return null;
    const { name, role } = this.options;
    return new RepositoryInstructions(localGit(this.board.rootDir, git), maxBytes, (files) => this.sink.emit({ type: 'repository_instructions', pipeline: task.pipeline ?? null, task: task.id, agent: name, role, files }));
  }

  /** Who and where, for the person's hooks. */
  private scene(ctx: Pick<ToolContext, 'task' | 'workspace'>): HookScene {
    return { team: this.registry.read().team, agent: this.options.name, role: this.options.role, task: ctx.task, workspace: ctx.workspace };
  }

  private async onModelError(ctx: ToolContext, error: unknown): Promise<void> {
    const serialized = serializeError(error);
    this.emit({ type: 'error', name: this.options.name, error: serialized });
    this.trace.write({ kind: 'error', agent: this.options.name, code: serialized.code, message: serialized.message });
    const fatal = FATAL_MODEL_CODES.has(serialized.code);
    const retryAfterMs = error instanceof ModelError ? (error.retryAfterMs ?? 0) : 0;
    if (ctx.task && ctx.fence) await this.ends.modelError(ctx.task, ctx.fence, serialized, fatal, retryAfterMs);
    if (fatal) this.exitWith(`model error: ${serialized.message}`, 'model_error');
    else if (!ctx.task) await this.options.wake.wait(Math.max(this.settings.pollMs, retryAfterMs), this.options.signal);
  }

  /** Ends the run after this task (or now, when idle): why, in words and as a kind. */
  private exitWith(reason: string, why: ExitReason): void {
    this.exitReason = reason;
    this.exitWhy = why;
  }

  private identity(): ModelMessage[] {
    return identityMessages(this.options.name, this.options.role, this.registry.read().team);
  }

  private setStatus(status: MemberStatus, task: number | null, reason?: string): Promise<void> {
    return this.status.set(status, task, reason);
  }

  /** A remark with no event of its own: shown by a host that prints activity, and on the board's log. */
  private note(task: Task | null, text: string): void {
    this.activity(task?.id ?? null, text);
    this.sink.emit({ type: 'note', pipeline: task?.pipeline ?? null, task: task?.id ?? null, agent: this.options.name, role: this.options.role, text });
  }

  private activity(task: number | null, text: string): void {
    this.emit({ type: 'activity', name: this.options.name, role: this.options.role, task, text });
  }

  private emit(event: TeammateEvent): void {
    this.options.emit?.(redactEvent(event, this.secrets));
  }
}

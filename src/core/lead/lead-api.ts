import type { TeammateExit } from '../agent/manager.js';
import type { RejectedLines } from '../board/mailbox.js';
import type { ProtocolRequest } from '../board/requests.js';
import type { Member, MemberState, Message, Stage, Task, TaskUsage } from '../board/schemas.js';
import type { ModelSpec } from '../model/factory.js';
import type { PipelineState } from '../stages/pipeline.js';
import type { PipelineStatus } from '../stages/pipeline-status.js';
import type { EventFilter, TeamEvent } from '../events/schema.js';
import type { TraceSummary } from '../trace/summary.js';
import type { PendingQuestion } from './questions.js';
import type { MergerOptions } from './branches.js';
export type { PendingQuestion } from './questions.js';
import type { LeadEvent, TeamMemberSpec } from './session-types.js';
import type { MemberSpend } from './spend.js';

/** How a merge or discard by hand waits for a drain under way (MergerOptions, less the stop: the session's close ends the wait). */
export type HandMerge = Pick<MergerOptions, 'onLine' | 'patient'>;

/**
 * The narrow face of a board that the web board and the MCP server act through: what a person sees
 * and does, whoever runs the team. A LeadSession has it (the lead runs in this process); so does a
 * BoardLead (board-lead.ts: the board with no lease taken, beside a lead in another process, or
 * workers, or nobody). A front end written against it works with either.
 */
export interface LeadControls {
  /** Every event the session tells (see LeadEvent), from now until the returned function is called. */
  subscribe(listener: (event: LeadEvent) => void): () => void;
  /** Everything a front end shows, as plain data read now (see LeadSnapshot). */
  snapshot(): LeadSnapshot;
  /** One task as this process knows it, or null (a front end names what an event is about). */
  task(id: number): Task | null;
  /** One pipeline: its status, tasks, revisions and usage. */
  stateOf(pipeline: number): PipelineState;
  /** Questions waiting for the person, oldest first (what a plain line answers). */
  pendingQuestions(): PendingQuestion[];
  /** The board's log: the events that match, oldest first (the newest `limit` of them). */
  events(filter?: EventFilter, limit?: number): Promise<TeamEvent[]>;
  /** Who leads the board now: this process, another one, or nobody. */
  leader(): LeaderView;
  /**
   * Posts a requirement as a new pipeline (its first task: `requirements`, or `startStage`). `from`
   * names a poster other than the lead's own front end (the web board, an MCP client): the lead's
   * activity then says the post, as it says one from another process.
   */
  post(requirement: string, startStage?: Stage, from?: string): Promise<Task>;
  /** Answers a pending question (the oldest when no id is given). */
  answer(text: string, questionId?: string): Promise<PendingQuestion>;
  /** Cancels a pipeline's open tasks (their owners stop); the ids cancelled. */
  cancel(pipeline: number, reason?: string): Promise<number[]>;
  /** Restarts a failed or cancelled pipeline from the stage that ended it; the new task. */
  retry(pipeline: number): Promise<Task>;
  /** A pipeline's branch: its files and its diff against where it started, as text. */
  diff(pipeline: number): Promise<string>;
  /** Merges an approved pipeline's branch into the person's current branch, after a drain under way (HandMerge); the line that says how. */
  merge(pipeline: number, options?: HandMerge): Promise<string>;
  /** Drains the merge queue once: approved pipelines into their base, in approval order; a line per pipeline, each told `onLine` as it is said. */
  mergeQueue(onLine?: (line: string) => void): Promise<string[]>;
  /** Removes a pipeline's worktree and branch, after a drain under way (HandMerge); the line that says what went. */
  discard(pipeline: number, options?: HandMerge): Promise<string>;
  /** Decides a plan-approval request and tells the teammate. */
  decidePlan(requestId: string, approve: boolean, feedback?: string): Promise<void>;
  /** Waits until pipeline `id` is approved or failed (or `signal` aborts); its state then. */
  waitForPipeline(id: number, signal?: AbortSignal): Promise<PipelineState>;
  /** The lead's name on the board. */
  readonly lead: string;
  /** The board as shown in headers: its directory, or its URL (no password) and the local folder. */
  readonly where: string;
}

/** The board's lead as its lease records it. */
export interface LeaderView {
  /** `here`: this process; `elsewhere`: another live process; `none`: no lead, or its lease went stale. */
  state: 'here' | 'elsewhere' | 'none';
  pid: number | null;
  host: string | null;
  since: string | null;
}

/**
 * The lead session as every front end sees it — the ink REPL, line mode, `autoteam run`, and later a
 * web board or an MCP server: commands, queries and one event stream. None of the session's parts
 * (board, mailbox, pipeline, watcher, trace) is reachable through it, so a front end holds no logic
 * the others lack, and a fake of this interface drives any of them in a test.
 */
export interface LeadApi extends LeadControls {
  // The event stream, snapshot, the queries and commands every front end shares are LeadControls'.

  // ── Queries ─────────────────────────────────────────────────────────────────────────────────
  /** Whether this session runs the teammate `name` now. */
  isRunning(name: string): boolean;
  /** The model a teammate of `role` works its next tasks on, as shown. */
  modelOf(role: string): string;
  /** Every tool the lead agent is offered, by name (what /help says the lead can do). */
  leadToolNames(): string[];
  /** Why the team is still busy, or null when nothing can still move (see LeadSession.busyReason). */
  busyReason(): string | null;
  /** The first model error no retry will fix (bad key, unknown model, unreachable endpoint), if any. */
  fatalModelError(): { code: string; message: string } | null;
  /** The lead and members whose inbox has had unreadable lines moved aside, with how many. */
  rejectedCounts(): Promise<Record<string, number>>;
  /**
   * The model calls, tools and tokens per role, since `since` (ISO time), on the tasks `ids`: this
   * process's trace and, for the work of other processes, the board's log (lead/work-summary.ts).
   */
  workSummary(ids: ReadonlySet<number>, since: string): Promise<TraceSummary>;
  /** The models, as a person reads them (the header). */
  readonly modelLabel: string;
  /** The models' ids (a JSON summary). */
  readonly modelIds: string;
  /** True on the offline model: its tokens cost nothing and are shown as tokens only. */
  readonly offline: boolean;
  /** Whether a simulated user answers the teammates' questions. */
  readonly autoAnswer: boolean;

  // ── Commands ────────────────────────────────────────────────────────────────────────────────
  /** Takes the board (the lead's lease), starts watching, and spawns `team`. */
  start(team?: readonly TeamMemberSpec[]): Promise<void>;
  /** Quits: the lead agent stopped, the shutdown protocol for every teammate, their tasks handed back. */
  close(graceMs?: number): Promise<{ exits: TeammateExit[]; released: number[] }>;
  /** Free text for the lead agent, one turn at a time; resolves with its reply. */
  ask(text: string): Promise<string>;
  /** Sends one teammate a message from the lead (refused for a name not on the team). */
  message(teammate: string, text: string): Promise<Message>;
  /**
   * Teammates of `role` work their next tasks on `model`: a spec, or a choice as a person types it
   * (`offline`, `openai:gpt-4.1`), resolved once the role is known to be one.
   */
  setModel(role: string, model: ModelSpec | string): void;
  /** Starts a teammate in its own thread. */
  spawn(name: string, role: string, prompt?: string): void;
  /** The shutdown protocol for one teammate (bounded wait, then stop); null when it was not running. */
  requestShutdown(name: string): Promise<TeammateExit | null>;
  /**
   * Asks a live member this session does not run (an `autoteam worker`, a teammate of another
   * process) to shut down, with the protocol's request in its inbox: what was done, or null when
   * `name` is no live member elsewhere (UnknownRecipientError: no member at all). Its leaving comes
   * through the log. A teammate of this session resting after an idle timeout is kept down instead.
   */
  requestShutdownElsewhere(name: string): Promise<string | null>;
  /** Lets a simulated user answer the teammates' questions (those pending too), or stops it. */
  setAutoAnswer(on: boolean): void;
  /** Takes the person's unread messages (what /inbox shows, once). */
  takeUnread(): Message[];
  /** Takes the lines of the lead's inbox found unreadable since the last call, or null. */
  takeRejectedLines(): RejectedLines | null;
  /** Tells what the board's log holds beyond what was told (before a reply is shown, say), the lead's inbox read first. */
  catchUp(): Promise<void>;
}

/** Everything a front end shows, read at one moment: plain data, safe to keep or send. */
export interface LeadSnapshot {
  board: {
    /** Its directory, or its URL without the password. */
    location: string;
    /** As headers show it (with the local folder for a database board). */
    where: string;
    /** The local folder: workspaces, the trace. */
    rootDir: string;
    /** The person's repository's checkout in repository mode, or null. */
    repository: string | null;
    /** Task files that could not be read (invalid, too large), one line each. */
    problems: string[];
  };
  tasks: Task[];
  pipelines: PipelineView[];
  /** The registry's members, and the teammates this session started that have not joined it yet (`starting`). */
  team: { name: string; lead: string; members: MemberView[] };
  questions: PendingQuestion[];
  /** Plan-approval requests waiting for the lead. */
  plans: ProtocolRequest[];
  /** What this session's teammates spent: in all, and each (members that spent nothing are absent). */
  spend: { total: MemberSpend; members: Record<string, MemberSpend> };
  models: {
    label: string;
    ids: string;
    offline: boolean;
    /** Each role of the team (and any with a model of its own) and the model of its next tasks. */
    roles: Array<{ role: string; model: string }>;
    /** The model of other roles. */
    others: string;
  };
  autoAnswer: boolean;
}

export interface PipelineView {
  id: number;
  status: PipelineStatus;
  usage: TaskUsage;
  /** Dollars at its roles' models' prices, or null when a model has no price. */
  cost: number | null;
  /** Where its files are: its worktree, or `workspace/<id>`. */
  workspace: string;
}

/** A member as a front end shows it: `starting` while a teammate this session started has not joined yet. */
export interface ShownMember extends Omit<Member, 'status'> {
  status: MemberState;
  /** Shut down on its idle timeout by this session, which starts it again when work of its role comes. */
  resting?: boolean;
}

export interface MemberView extends ShownMember {
  /** Whether this session runs it (another process's member may run on another model). */
  running: boolean;
  /** The model its role works on, as shown. */
  model: string;
  spend: MemberSpend;
}

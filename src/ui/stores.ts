import type { Task, TaskStatus, TaskUsage } from '../core/board/schemas.js';
import { pipelineUsage } from '../core/stages/pipeline-status.js';
import type { ShownMember } from '../core/lead/lead-api.js';
import type { LeadApi, LeadEvent, PendingQuestion } from '../core/lead/session.js';
import { formatSpend } from '../core/lead/spend.js';
import { outcomeOf } from '../frontend/format.js';
import { type ActivityView, activityView, describeSessionEvent } from '../frontend/activity.js';
import { toldByQuit } from '../frontend/quit.js';
import { printable } from '../frontend/printable.js';
import type { Tone } from '../frontend/commands.js';
import { type PipelineStatus, pipelineStatuses } from '../frontend/work.js';

/** A tiny external store for useSyncExternalStore: a snapshot and change listeners. */
export class Store<T> {
  private listeners = new Set<() => void>();

  constructor(protected snapshot: T) {}

  readonly subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  readonly get = (): T => this.snapshot;

  protected set(next: T): void {
    this.snapshot = next;
    for (const listener of this.listeners) listener();
  }
}

export interface FeedItem {
  id: number;
  text: string;
  tone: Tone;
}

/** The activity stream: append-only (ink's <Static> prints each item once). */
export class ActivityFeed extends Store<readonly FeedItem[]> {
  private next = 0;

  /** How model text is shown (/verbose), applied to events as they arrive. */
  constructor(readonly view: ActivityView = activityView()) {
    super([]);
  }

  push(text: string, tone: Tone = 'info'): void {
    this.set([...this.snapshot, { id: this.next++, text: printable(text), tone }]);
  }

  /** Set while the session quits: its report tells who left, so their exits are not shown twice. */
  quitting = false;

  /** Follows a session's events from now on; returns the unsubscribe. */
  follow(session: LeadApi): () => void {
    return session.subscribe((event) => {
      if (this.quitting && toldByQuit(event)) return;
      const line = describeSessionEvent(session, event, this.view);
      if (line) this.push(line.text, line.tone);
    });
  }
}

export interface BoardView {
  total: number;
  counts: Record<TaskStatus, number>;
  /** What the panel shows: every task in progress, then the newest, in id order. */
  shown: Task[];
  byId: ReadonlyMap<number, Task>;
  pipelines: ReadonlyMap<number, PipelineStatus>;
  /** Model calls and tokens per pipeline. */
  usage: ReadonlyMap<number, TaskUsage>;
  /** What became of an approved pipeline's branch: `merged into main`, `discarded`. */
  outcomes: ReadonlyMap<number, string>;
  /** Dollars per pipeline, where every task's model has a price. */
  cost?: ReadonlyMap<number, number>;
  /** Task files that could not be read (invalid, too large): `autoteam tasks` names them. */
  problems?: number;
  readMs: number;
}

const NO_COUNTS: Record<TaskStatus, number> = { pending: 0, in_progress: 0, completed: 0, failed: 0, cancelled: 0 };

export function boardView(tasks: readonly Task[], rows: number, readMs = 0): BoardView {
  const counts = { ...NO_COUNTS };
  for (const task of tasks) counts[task.status]++;
  const sorted = [...tasks].sort((a, b) => a.id - b.id);
  const working = sorted.filter((task) => task.status === 'in_progress').slice(-rows);
  const picked = new Set(working.map((task) => task.id));
  for (let i = sorted.length - 1; i >= 0 && picked.size < rows; i--) picked.add(sorted[i]!.id);
  // Each pipeline's tasks, gathered once: read again on every change of the board.
  const pipelines = pipelineStatuses(sorted);
  const own = new Map<number, Task[]>();
  for (const task of sorted) if (task.pipeline !== null) (own.get(task.pipeline) ?? own.set(task.pipeline, []).get(task.pipeline)!).push(task);
  return {
    total: tasks.length,
    counts,
    shown: sorted.filter((task) => picked.has(task.id)),
    byId: new Map(sorted.map((task) => [task.id, task])),
    pipelines,
    usage: new Map([...pipelines.keys()].map((id) => [id, pipelineUsage(own.get(id) ?? [])])),
    outcomes: new Map([...pipelines.keys()].flatMap((id) => {
      const outcome = outcomeOf(own.get(id) ?? []);
      return outcome ? [[id, outcome] as const] : [];
    })),
    readMs,
  };
}

/**
 * The board as the panel shows it, re-read on 'board' events at most every `minIntervalMs` (longer
 * when a read is slow, so a board of thousands of tasks cannot starve the input).
 */
export class BoardStore extends Store<BoardView> {
  private timer: NodeJS.Timeout | null = null;
  private lastRead = 0;
  private interval: number;

  constructor(
    private readonly session: LeadApi,
    private rows = 12,
    private readonly minIntervalMs = 150,
  ) {
    super(boardView([], rows));
    this.interval = minIntervalMs;
  }

  setRows(rows: number): void {
    if (rows === this.rows) return;
    this.rows = rows;
    this.refresh();
  }

  refresh(): void {
    const started = performance.now();
    const { tasks, pipelines, board } = this.session.snapshot();
    const readMs = performance.now() - started;
    this.lastRead = Date.now();
    this.interval = Math.max(this.minIntervalMs, readMs * 4);
    const view = boardView(tasks, this.rows, readMs);
    const cost = new Map(pipelines.flatMap((pipeline) => (pipeline.cost === null ? [] : [[pipeline.id, pipeline.cost] as const])));
    this.set({ ...view, cost, problems: board.problems.length });
  }

  /** Asks for a refresh; coalesces bursts into one read. */
  poke(): void {
    if (this.timer) return;
    const wait = Math.max(0, this.lastRead + this.interval - Date.now());
    this.timer = setTimeout(() => {
      this.timer = null;
      this.refresh();
    }, wait);
  }

  follow(): () => void {
    const unsubscribe = this.session.subscribe((event) => {
      if (event.type === 'board' || event.type === 'pipeline' || (event.type === 'teammate' && event.event.type === 'status')) this.poke();
    });
    this.refresh();
    return () => {
      unsubscribe();
      if (this.timer) clearTimeout(this.timer);
      this.timer = null;
    };
  }
}

export interface TeamView {
  team: string;
  lead: string;
  members: ShownMember[];
  /** name → what the teammate spent (`12k tok · $0.041`); the session's total under ''. */
  spend: Readonly<Record<string, string>>;
  /** name → unreadable lines its inbox has had moved aside (members with none are absent). */
  rejected?: Readonly<Record<string, number>>;
  /** The team is still being started: no member yet is not "no teammates". */
  starting?: boolean;
}

/** The team panel: the registry (read again when the board changes), with status events from this process's threads applied as they arrive. */
export class TeamStore extends Store<TeamView> {
  constructor(private readonly session: LeadApi) {
    super({ team: '', lead: 'lead', members: [], spend: {}, starting: true });
  }

  /**
   * The session's start is over, having started `spawned` teammates (0: none, or the start failed).
   * Their threads report a moment later: until the first does (or exits), the panel says the team is
   * starting — for at most `patienceMs`, so that a thread that never reports cannot leave it so.
   */
  started(spawned: number, patienceMs = 15_000): void {
    if (spawned === 0) {
      this.set({ ...this.snapshot, starting: false });
      return;
    }
    setTimeout(() => {
      if (this.snapshot.starting) this.set({ ...this.snapshot, starting: false });
    }, patienceMs).unref();
  }

  reload(): void {
    const { team } = this.session.snapshot();
    const members = team.members.map(({ running: _running, model: _model, spend: _spend, ...member }): ShownMember => member);
    this.set({ ...this.snapshot, team: team.name, lead: team.lead, members });
    // Counted from each inbox's rejected lines (a stat per inbox while nothing changed).
    void this.session.rejectedCounts().then(
      (rejected) => {
        const known = this.snapshot.rejected ?? {};
        const same = Object.keys(rejected).length === Object.keys(known).length && Object.entries(rejected).every(([name, count]) => known[name] === count);
        if (!same) this.set({ ...this.snapshot, rejected });
      },
      () => undefined,
    );
  }

  follow(): () => void {
    const unsubscribe = this.session.subscribe((event: LeadEvent) => {
      // Members of other processes (an `autoteam worker`, a member found dead) change only on the board.
      // A teammate reported or left: the team is no longer "starting" (started() may not have run yet).
      if ((event.type === 'teammate_exit' || (event.type === 'teammate' && event.event.type === 'status')) && this.snapshot.starting) this.set({ ...this.snapshot, starting: false });
      if (event.type === 'teammate_exit' || event.type === 'board' || event.type === 'notice') this.reload();
      // What a teammate spent: its thread's report, or (a teammate of another process) its model call in the log.
      const name = event.type === 'teammate' && event.event.type === 'usage' ? event.event.name : event.type === 'team' && event.event.type === 'model_call' ? event.event.agent : null;
      if (name) {
        const { spend, models } = this.session.snapshot();
        const own = spend.members[name];
        this.set({ ...this.snapshot, spend: { ...this.snapshot.spend, ...(own ? { [name]: formatSpend(own, models.offline) } : {}), '': formatSpend(spend.total, models.offline) } });
        return;
      }
      if (event.type !== 'teammate' || event.event.type !== 'status') return;
      const status = event.event;
      const known = this.snapshot.members.find((member) => member.name === status.name);
      const base: ShownMember = known ?? { name: status.name, role: status.role, status: status.status, task: null, since: '', pid: null };
      const next: ShownMember = { ...base, role: status.role, status: status.status, task: status.task, since: new Date().toISOString() };
      if (status.reason) next.reason = status.reason;
      else delete next.reason;
      const members = known ? this.snapshot.members.map((member) => (member.name === status.name ? next : member)) : [...this.snapshot.members, next];
      this.set({ ...this.snapshot, members });
    });
    this.reload();
    return unsubscribe;
  }
}

/** Questions waiting for the person, oldest first. */
export class QuestionStore extends Store<readonly PendingQuestion[]> {
  constructor(private readonly session: LeadApi) {
    super([]);
  }

  follow(): () => void {
    const unsubscribe = this.session.subscribe((event) => {
      if (event.type === 'question' || event.type === 'answered' || event.type === 'question_withdrawn') this.set(this.session.pendingQuestions());
    });
    this.set(this.session.pendingQuestions());
    return unsubscribe;
  }

  /** The session is over: nobody here can answer now (a question still pending waits on the board for the next session). */
  closed(): void {
    this.set([]);
  }
}

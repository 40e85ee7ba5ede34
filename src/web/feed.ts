import type { ServerResponse } from 'node:http';
import type { Task } from '../core/board/schemas.js';
import { serializeError } from '../core/errors.js';
import type { LeadControls } from '../core/lead/lead-api.js';
import type { LeadEvent } from '../core/lead/session-types.js';
import { cardOf, stateOf, timelineEntry, type WebState } from './views.js';

/** How long changes gather before the pages are told (a pipeline writes a burst per step). */
const GATHER_MS = 150;
/** How often the state is read again without a change: heartbeats age, an outage is probed. */
const TICK_MS = 2_000;
/** How many recent events a page gets when it connects. */
const RECENT = 200;

/**
 * The pages' live feed over server-sent events. Every page gets, on connecting, the whole board
 * (`hello`: cards, pipelines, state, recent events), then only what changed: `cards` and
 * `pipelines` with the changed entries, `state` when it differs, and each event of the board's log
 * as it comes (`event`). Changes are gathered for 150 ms and diffed against what was sent, so a page
 * on a 10,000-task board gets a few cards per step, not the board.
 */
export class LiveFeed {
  private readonly pages = new Set<ServerResponse>();
  private readonly sentCards = new Map<number, string>();
  private readonly sentPipelines = new Map<number, string>();
  private sentState = '';
  private state: WebState | null = null;
  private readonly recent: ReturnType<typeof timelineEntry>[] = [];
  private outage: { since: string; message: string } | null = null;
  private timer: NodeJS.Timeout | null = null;
  private readonly ticker: NodeJS.Timeout;
  private readonly unsubscribe: () => void;
  private flushing: Promise<void> | null = null;
  private readonly cards = new WeakMap<Task, string>();

  constructor(
    private readonly controls: LeadControls,
    /** Text leaving the server, made safe (secrets redacted). */
    private readonly safe: (text: string) => string,
    /** A board in a database can go away; a folder cannot in the same way. */
    private readonly remote: boolean,
  ) {
    this.unsubscribe = controls.subscribe((event) => this.heard(event));
    this.ticker = setInterval(() => void this.flush(), TICK_MS);
    this.ticker.unref();
  }

  /** Reads the board once, and the log's last events, so the first page gets both at once. */
  async start(): Promise<void> {
    // What came before this server started (a board with a history): the newest, before any heard since.
    const past = await this.controls.events({}, RECENT).catch(() => []);
    const heardFrom = this.recent[0]?.seq ?? Number.POSITIVE_INFINITY;
    const earlier = past.filter((event) => (event.seq ?? 0) < heardFrom).map(timelineEntry);
    this.recent.unshift(...earlier.slice(Math.max(0, earlier.length + this.recent.length - RECENT)));
    await this.flush();
  }

  get current(): WebState | null {
    return this.state;
  }

  /** A page connects: headers, the whole board, then changes until it goes. */
  add(response: ServerResponse): void {
    response.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', connection: 'keep-alive', 'x-accel-buffering': 'no' });
    const cards = [...this.sentCards.values()].join(',');
    const pipelines = [...this.sentPipelines.values()].join(',');
    response.write(`event: hello\ndata: {"cards":[${cards}],"pipelines":[${pipelines}],"state":${this.sentState || 'null'},"events":${this.safe(JSON.stringify(this.recent))}}\n\n`);
    this.pages.add(response);
    response.on('close', () => this.pages.delete(response));
  }

  /** Sends the pages the last state, then `closed` with why, and stops. */
  async end(reason: string): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    // A read already under way may have started before the last change: read once more after it.
    await this.flushing?.catch(() => undefined);
    await this.flush().catch(() => undefined);
    this.send('closed', JSON.stringify({ reason }));
    this.close();
  }

  close(): void {
    this.unsubscribe();
    clearInterval(this.ticker);
    if (this.timer) clearTimeout(this.timer);
    for (const page of this.pages) page.end();
    this.pages.clear();
  }

  private heard(event: LeadEvent): void {
    if (event.type === 'team') {
      const entry = timelineEntry(event.event);
      this.recent.push(entry);
      if (this.recent.length > RECENT) this.recent.shift();
      this.send('event', this.safe(JSON.stringify(entry)));
      if (event.event.type === 'board_outage' && event.event.state === 'up') this.outage = null;
    }
    if (event.type === 'error' && event.code === 'BOARD_UNREACHABLE') this.outage ??= { since: new Date().toISOString(), message: event.message };
    this.schedule();
  }

  private schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.flush();
    }, GATHER_MS);
  }

  /** Reads the board and tells the pages what changed (one read at a time). */
  private flush(): Promise<void> {
    this.flushing ??= this.read().finally(() => (this.flushing = null));
    return this.flushing;
  }

  private async read(): Promise<void> {
    if (this.remote) await this.probe();
    let snapshot;
    try {
      snapshot = this.controls.snapshot();
    } catch (error) {
      const { code, message } = serializeError(error);
      if (code === 'BOARD_UNREACHABLE') this.outage ??= { since: new Date().toISOString(), message };
      return this.sendState();
    }
    const cards = diff(this.sentCards, snapshot.tasks.map((task) => [task.id, this.cardText(task)]));
    if (cards) this.send('cards', cards);
    const pipelines = diff(this.sentPipelines, snapshot.pipelines.map((pipeline) => [pipeline.id, this.safe(JSON.stringify(pipeline))]));
    if (pipelines) this.send('pipelines', pipelines);
    this.state = stateOf(snapshot, this.controls, this.outage);
    this.sendState();
  }

  /** A card's JSON, made once per task object (the board hands back the same object until the task changes). */
  private cardText(task: Task): string {
    let text = this.cards.get(task);
    if (text === undefined) {
      text = this.safe(JSON.stringify(cardOf(task)));
      this.cards.set(task, text);
    }
    return text;
  }

  /** During an outage the snapshot is the last one read: the log is asked whether the board answers. */
  private async probe(): Promise<void> {
    try {
      await this.controls.events({}, 1);
      this.outage = null;
    } catch (error) {
      this.outage ??= { since: new Date().toISOString(), message: serializeError(error).message };
    }
  }

  private sendState(): void {
    if (this.state) this.state = { ...this.state, outage: this.outage };
    const text = this.safe(JSON.stringify(this.state));
    if (text === this.sentState) return;
    this.sentState = text;
    this.send('state', text);
  }

  private send(event: string, data: string): void {
    for (const page of this.pages) page.write(`event: ${event}\ndata: ${data}\n\n`);
  }
}

/** Updates `sent` to `now`; the changed and removed entries as JSON text, or null when none. */
function diff(sent: Map<number, string>, now: ReadonlyArray<[number, string]>): string | null {
  const changed: string[] = [];
  const seen = new Set<number>();
  for (const [id, text] of now) {
    seen.add(id);
    if (sent.get(id) === text) continue;
    sent.set(id, text);
    changed.push(text);
  }
  const removed = [...sent.keys()].filter((id) => !seen.has(id));
  for (const id of removed) sent.delete(id);
  if (changed.length === 0 && removed.length === 0) return null;
  return `{"changed":[${changed.join(',')}],"removed":${JSON.stringify(removed)}}`;
}

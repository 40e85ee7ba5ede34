import type { PipelineView } from '../../core/lead/lead-api.js';
export { age } from '../../core/words.js';
import type { Card, timelineEntry, WebState } from '../views.js';

export type Entry = ReturnType<typeof timelineEntry>;
export type { Card, PipelineView, WebState };

/** What the page knows: the board as the server's feed last told it. */
export interface Board {
  cards: Map<number, Card>;
  pipelines: Map<number, PipelineView>;
  state: WebState | null;
  events: Entry[];
  /** False while the feed is down (the server stopped, the network went away). */
  connected: boolean;
  /** Why the page follows nothing any more: the server said it stopped, or its token is not valid now. */
  ended: string | null;
  /** Bumped on every change, so views re-render. */
  version: number;
}

const KEEP_EVENTS = 300;

interface Delta<T> {
  changed: T[];
  removed: number[];
}

/**
 * Follows `/api/events`: the whole board on `hello`, then what changed. EventSource reconnects on
 * its own after a drop; every `hello` replaces what the page held, so nothing is missed.
 */
export function follow(onChange: (board: Board) => void): () => void {
  const board: Board = { cards: new Map(), pipelines: new Map(), state: null, events: [], connected: false, ended: null, version: 0 };
  let pending = false;
  // Many events in one frame render once.
  const changed = () => {
    board.version++;
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => {
      pending = false;
      onChange({ ...board });
    });
  };
  const source = new EventSource('/api/events');
  const on = <T>(name: string, handle: (data: T) => void) => source.addEventListener(name, (message) => handle(JSON.parse((message as MessageEvent<string>).data) as T));
  on<{ cards: Card[]; pipelines: PipelineView[]; state: WebState | null; events: Entry[] }>('hello', (hello) => {
    board.cards = new Map(hello.cards.map((card) => [card.id, card]));
    board.pipelines = new Map(hello.pipelines.map((pipeline) => [pipeline.id, pipeline]));
    board.state = hello.state;
    board.events = hello.events;
    board.connected = true;
    changed();
  });
  on<Delta<Card>>('cards', (delta) => {
    apply(board.cards, delta);
    changed();
  });
  on<Delta<PipelineView>>('pipelines', (delta) => {
    apply(board.pipelines, delta);
    changed();
  });
  on<WebState>('state', (state) => {
    board.state = state;
    changed();
  });
  on<Entry>('event', (entry) => {
    board.events = [...board.events.slice(-(KEEP_EVENTS - 1)), entry];
    changed();
  });
  on<{ reason: string }>('closed', ({ reason }) => {
    board.ended = `${reason}: autoteam web has stopped, and this page shows the last state it sent.`;
    source.close();
    changed();
  });
  source.onerror = () => {
    board.connected = false;
    changed();
    // A refused token (the server restarted with a new one) is not a network blip: say so, stop retrying.
    void fetch('/api/state').then((response) => {
      if (response.status !== 401 || board.ended) return;
      board.ended = 'This page\'s token is not valid any more (autoteam web was restarted?): open the address it printed.';
      source.close();
      changed();
    }, () => undefined);
  };
  return () => source.close();
}

function apply<T extends { id: number }>(map: Map<number, T>, delta: Delta<T>): void {
  for (const item of delta.changed) map.set(item.id, item);
  for (const id of delta.removed) map.delete(id);
}

/** The CSRF token the server put in the page. */
const csrf = () => document.querySelector<HTMLMetaElement>('meta[name=csrf]')?.content ?? '';

/** A change: POSTed as JSON with the CSRF token; resolves with the line that says what was done. */
export async function act(path: string, body: unknown = {}): Promise<string> {
  const response = await fetch(path, { method: 'POST', headers: { 'content-type': 'application/json', 'x-csrf-token': csrf() }, body: JSON.stringify(body) });
  const reply = (await response.json().catch(() => ({}))) as { line?: string; note?: string; error?: string };
  if (!response.ok) throw new Error(reply.error ?? `${response.status} ${response.statusText}`);
  return `${reply.line ?? 'done'}${reply.note ? `. Note: ${reply.note}` : ''}`;
}

export async function read<T>(path: string): Promise<T> {
  const response = await fetch(path);
  const reply = (await response.json()) as T & { error?: string };
  if (!response.ok) throw new Error(reply.error ?? `${response.status} ${response.statusText}`);
  return reply;
}

export function money(cost: number | null | undefined): string {
  return cost === null || cost === undefined ? '—' : `$${cost.toFixed(cost < 1 ? 4 : 2)}`;
}

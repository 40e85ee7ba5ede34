/**
 * The prompt's editing as data: a text and a cursor (a UTF-16 index, never inside a surrogate pair).
 * Kept apart from ink so each key's effect is a plain function.
 */
export interface LineState {
  text: string;
  cursor: number;
}

export const EMPTY_LINE: LineState = { text: '', cursor: 0 };

/**
 * What ink's useInput hands over for the bracketed-paste markers (`ESC[200~`, `ESC[201~`: the
 * terminal wraps a paste in them once the app asked for it with `ESC[?2004h`), escape stripped.
 */
export const PASTE_START = '[200~';
export const PASTE_END = '[201~';

/** Asks the terminal to mark pastes, and stops asking. */
export const BRACKETED_PASTE_ON = '\x1b[?2004h';
export const BRACKETED_PASTE_OFF = '\x1b[?2004l';

const isLow = (code: number | undefined) => code !== undefined && code >= 0xdc00 && code <= 0xdfff;

function before(text: string, index: number): number {
  if (index <= 0) return 0;
  return isLow(text.charCodeAt(index - 1)) && index >= 2 ? index - 2 : index - 1;
}

function after(text: string, index: number): number {
  if (index >= text.length) return text.length;
  return isLow(text.charCodeAt(index + 1)) ? index + 2 : index + 1;
}

/**
 * What of a long line the prompt shows: at most `max` characters around the cursor, and how many
 * before and after are left out. Laying out a whole paste of tens of KB again at every chunk that
 * arrives took seconds, and minutes near the 100 KB limit; a terminal shows a few screens anyway.
 */
export function shownPart(state: LineState, max = 2_000): { text: string; cursor: number; before: number; after: number } {
  const { text, cursor } = state;
  if (text.length <= max) return { text, cursor, before: 0, after: 0 };
  // Most of it before the cursor (what was just typed or pasted), some after; never half a surrogate pair.
  let from = Math.max(0, Math.min(cursor - Math.floor(max * 0.8), text.length - max));
  if (isLow(text.charCodeAt(from))) from++;
  let to = Math.min(text.length, from + max);
  if (isLow(text.charCodeAt(to))) to++;
  return { text: text.slice(from, to), cursor: cursor - from, before: from, after: text.length - to };
}

export function lineOf(text: string): LineState {
  return { text, cursor: text.length };
}

export function insert(state: LineState, chunk: string): LineState {
  return { text: state.text.slice(0, state.cursor) + chunk + state.text.slice(state.cursor), cursor: state.cursor + chunk.length };
}

export function backspace(state: LineState): LineState {
  const at = before(state.text, state.cursor);
  return { text: state.text.slice(0, at) + state.text.slice(state.cursor), cursor: at };
}

export function left(state: LineState): LineState {
  return { ...state, cursor: before(state.text, state.cursor) };
}

export function right(state: LineState): LineState {
  return { ...state, cursor: after(state.text, state.cursor) };
}

export function home(state: LineState): LineState {
  return { ...state, cursor: 0 };
}

export function end(state: LineState): LineState {
  return { ...state, cursor: state.text.length };
}

/** Ctrl+W: the word before the cursor and the blanks after it. */
export function deleteWord(state: LineState): LineState {
  const head = state.text.slice(0, state.cursor).replace(/\S+\s*$/, '');
  return { text: head + state.text.slice(state.cursor), cursor: head.length };
}

/** Ctrl+K: everything from the cursor to the end. */
export function killToEnd(state: LineState): LineState {
  return { ...state, text: state.text.slice(0, state.cursor) };
}

/** A paste's text as the line keeps it: line breaks as `\n`, Tabs kept, other control characters dropped. */
export function pasteText(raw: string): string {
  return raw.replace(/\r\n?/g, '\n').replace(/[\x00-\x08\x0b-\x1f\x7f]/g, '');
}

/** The line-editing Ctrl keys, by the character a terminal sends for each (typeChunk, and InputLine's keys). */
export const CTRL_EDITS: Readonly<Record<string, (state: LineState) => LineState>> = {
  u: () => EMPTY_LINE,
  w: deleteWord,
  k: killToEnd,
  a: home,
  e: end,
};

/** The Ctrl keys typeChunk applies: Ctrl+U and Ctrl+W, by the character each sends. */
const CHUNK_EDITS: Readonly<Record<string, (state: LineState) => LineState>> = { '\x15': CTRL_EDITS.u!, '\x17': CTRL_EDITS.w! };

/**
 * Typed keys that arrived in one chunk (a fast typist over ssh, a terminal that does not mark
 * pastes): Backspace/DEL delete, a line break is an Enter, Ctrl+U and Ctrl+W edit as typed alone,
 * other control characters are dropped. The other editing keys are dropped here too: such a chunk
 * may be an unmarked paste, whose text can hold a \x0b (a word processor's line break) or a \x01
 * that must not cut or move the line. `entered` says whether the chunk held an Enter; the text keeps
 * its line breaks as `\n`.
 */
export function typeChunk(state: LineState, chunk: string): { state: LineState; entered: boolean } {
  let next = state;
  let entered = false;
  for (let i = 0; i < chunk.length; i++) {
    const ch = chunk[i]!;
    if (ch === '\x7f' || ch === '\b') next = backspace(next);
    else if (ch === '\r' || ch === '\n') {
      entered = true;
      // An Enter that ends the chunk submits the line as it stands, wherever the cursor is (`tasks`,
      // Home, `/`, Enter is `/tasks`); one inside the chunk breaks the text there. \r\n is one break.
      if (/^[\r\n]*$/.test(chunk.slice(i))) break;
      if (ch === '\r' && chunk[i + 1] === '\n') i++;
      next = insert(next, '\n');
    } else if (ch >= ' ') next = insert(next, ch);
    else next = CHUNK_EDITS[ch]?.(next) ?? next;
  }
  return { state: next, entered };
}

import { Box, Text, useInput } from 'ink';
import { useRef, useState } from 'react';
import { complete } from '../frontend/commands.js';
import {
  backspace,
  CTRL_EDITS,
  EMPTY_LINE,
  end,
  home,
  insert,
  left,
  type LineState,
  lineOf,
  PASTE_END,
  PASTE_START,
  pasteText,
  right,
  shownPart,
  typeChunk,
} from './line-editor.js';

export interface InputLineProps {
  onSubmit(line: string): void;
  onQuit(): void;
  /** Shown when several commands match a Tab, or a paste is refused. */
  onHint?(text: string): void;
  /** The line went from empty to holding text (true: the person began a line, typed, pasted or recalled), or was cleared without being sent (false). */
  onBegin?(begun: boolean): void;
  placeholder: string;
  /** False while quitting: the line stops taking keys. */
  active: boolean;
  prompt?: string;
}

const MAX_INPUT_CHARS = 100 * 1024;

/**
 * The prompt: editing (←/→, Home/End, Ctrl+A/E, Backspace, Ctrl+U, Ctrl+W), Enter, Tab completion of
 * commands, history (↑/↓), Ctrl+C (clears a typed line, else quits) and Ctrl+D, and bracketed paste:
 * what arrives between the terminal's paste markers is inserted at the cursor, line breaks kept, and
 * only an Enter after it submits. One key handler owns the line, kept in a ref: a handler closes over
 * the last rendered value, and an Enter that follows a paste before the next frame must submit the
 * pasted text.
 */
export function InputLine({ onSubmit, onQuit, onHint, onBegin, placeholder, active, prompt = '›' }: InputLineProps) {
  const line = useRef<LineState>(EMPTY_LINE);
  const [shown, setShown] = useState<LineState>(EMPTY_LINE);
  const history = useRef<string[]>([]);
  const cursor = useRef(0);
  /** Inside a bracketed paste; `refused` once it went past MAX_INPUT_CHARS (the rest of it is dropped). */
  const paste = useRef<{ refused: boolean } | null>(null);

  const show = (next: LineState) => {
    line.current = next;
    setShown(next);
  };
  const set = (next: LineState) => {
    if (!line.current.text !== !next.text) onBegin?.(next.text !== '');
    show(next);
  };
  const submit = (text: string) => {
    // A chunk that brought its own Enter ("text\r") began the line too.
    if (!line.current.text && text) onBegin?.(true);
    if (text.trim()) history.current.push(text);
    cursor.current = history.current.length;
    show(EMPTY_LINE);
    onSubmit(text);
  };
  /** A line past the requirement limit is refused in one hint instead of freezing the screen. */
  const tooLong = (next: LineState): boolean => {
    if (next.text.length <= MAX_INPUT_CHARS) return false;
    onHint?.(`input over ${MAX_INPUT_CHARS / 1024} KB refused: put it in a file and refer to it`);
    set(EMPTY_LINE);
    return true;
  };

  useInput(
    (input, key) => {
      if (input === PASTE_START) {
        paste.current = { refused: false };
        return;
      }
      if (input === PASTE_END) {
        paste.current = null;
        return;
      }
      if (paste.current) {
        // Between the markers everything is text: a line break or a Tab is kept, nothing submits.
        const text = key.return ? '\n' : key.tab ? '\t' : pasteText(input);
        if (!text || paste.current.refused) return;
        const next = insert(line.current, text);
        if (tooLong(next)) paste.current.refused = true;
        else set(next);
        return;
      }
      if (key.ctrl && input === 'c') {
        // As a shell does: a line being typed is cleared first, and Ctrl+C on an empty one quits.
        if (line.current.text === '') return onQuit();
        onHint?.('line cleared: Ctrl+C again quits');
        return set(EMPTY_LINE);
      }
      if (key.return) return submit(line.current.text);
      if (key.ctrl) {
        if (input === 'd' && line.current.text === '') return onQuit();
        const edit = CTRL_EDITS[input];
        if (edit) return set(edit(line.current));
        if (key.leftArrow) return set(left(line.current));
        if (key.rightArrow) return set(right(line.current));
        // Any other Ctrl key means nothing here, and is not text either.
        return;
      }
      if (key.tab) {
        const { line: completed, candidates } = complete(line.current.text);
        if (completed !== line.current.text) set(lineOf(completed));
        else if (candidates.length > 1) onHint?.(candidates.map((name) => `/${name}`).join('  '));
        return;
      }
      if (key.upArrow || key.downArrow) {
        const entries = history.current;
        if (entries.length === 0) return;
        cursor.current = Math.max(0, Math.min(entries.length, cursor.current + (key.upArrow ? -1 : 1)));
        return set(lineOf(entries[cursor.current] ?? ''));
      }
      if (key.leftArrow) return set(left(line.current));
      if (key.rightArrow) return set(right(line.current));
      if (key.home) return set(home(line.current));
      if (key.end) return set(end(line.current));
      // ink reports Backspace (DEL) as delete: both erase the character before the cursor.
      if (key.backspace || key.delete) return set(backspace(line.current));
      if (!input || key.escape) return;
      // Keys that came in one chunk, without paste markers: "text\r" is the text and Enter, and a
      // block of several lines is one requirement or one answer, never a line each.
      const { state, entered } = typeChunk(line.current, input);
      if (tooLong(state)) return;
      if (entered) return submit(state.text.replace(/\n+$/, ''));
      set(state);
    },
    { isActive: active },
  );

  return (
    <Box>
      <Text bold color={active ? 'green' : 'gray'}>
        {prompt}{' '}
      </Text>
      <Shown state={shown} placeholder={placeholder} active={active} />
    </Box>
  );
}

/** The line with its cursor (an inverse cell), or the placeholder when it is empty; a long one around its cursor. */
function Shown({ state, placeholder, active }: { state: LineState; placeholder: string; active: boolean }) {
  if (state.text === '') {
    if (!active || !placeholder) return <Text>{active ? <Text inverse> </Text> : null}</Text>;
    return (
      <Text>
        <Text inverse>{placeholder[0]}</Text>
        <Text color="gray">{placeholder.slice(1)}</Text>
      </Text>
    );
  }
  const { text, cursor, before, after } = shownPart(state);
  const left = before > 0 ? <Text color="gray">{`[${before} characters before] …`}</Text> : null;
  const right = after > 0 ? <Text color="gray">{`… [${after} characters after]`}</Text> : null;
  if (!active) return <Text>{left}{text}{right}</Text>;
  const at = text.codePointAt(cursor);
  const width = at === undefined ? 0 : at > 0xffff ? 2 : 1;
  const under = text.slice(cursor, cursor + width);
  // At a line break or past the end the cursor is a blank cell; the break itself follows it.
  const cell = under === '' || under === '\n' ? ' ' : under;
  const rest = under === '\n' ? text.slice(cursor) : text.slice(cursor + width);
  return (
    <Text>
      {left}
      {text.slice(0, cursor)}
      <Text inverse>{cell}</Text>
      {rest}
      {right}
    </Text>
  );
}

import { Box, Text, useInput } from 'ink';
import TextInput from 'ink-text-input';
import { useRef, useState } from 'react';
import { complete } from '../frontend/commands.js';

export interface InputLineProps {
  onSubmit(line: string): void;
  onQuit(): void;
  /** Shown when several commands match a Tab. */
  onHint?(text: string): void;
  placeholder: string;
  /** False while quitting: the line stops taking keys. */
  active: boolean;
  prompt?: string;
}

const ignore = () => undefined;

/**
 * Keys that arrive in one chunk with text (a paste, a fast typist over ssh) reach TextInput as
 * characters: a Backspace/DEL deletes the character before it, a Tab or other control is dropped.
 */
export function applyControls(text: string): string {
  if (!/[\x00-\x09\x0b\x0c\x0e-\x1f\x7f]/.test(text)) return text;
  let out = '';
  for (const ch of text) {
    if (ch === '\x7f' || ch === '\b') out = [...out].slice(0, -1).join('');
    else if (ch === '\n' || ch === '\r' || ch >= ' ') out += ch;
  }
  return out;
}

/**
 * The prompt: ink-text-input for editing, plus Enter, Tab completion of commands, history (↑/↓),
 * Ctrl+C and Ctrl+D. The line lives in a ref as well as in state: key handlers close over the last
 * rendered value, and a paste followed at once by Enter would otherwise submit the old line.
 */
const MAX_INPUT_CHARS = 100 * 1024;

export function InputLine({ onSubmit, onQuit, onHint, placeholder, active, prompt = '›' }: InputLineProps) {
  const [value, setValue] = useState('');
  const line = useRef('');
  // Remounting TextInput puts its cursor at the end after Tab or history replaced the value.
  const [generation, setGeneration] = useState(0);
  const history = useRef<string[]>([]);
  const cursor = useRef(0);
  // TextInput inserts the "d" of Ctrl+D; both handlers see the same key, in an order ink does not
  // promise. Ours drops TextInput's change when it runs first, and undoes it when it runs second.
  const swallow = useRef(false);
  const beforeChange = useRef<string | null>(null);
  const thisKey = (flag: () => void) => setImmediate(flag);

  const set = (next: string) => {
    line.current = next;
    setValue(next);
  };
  const replace = (next: string) => {
    set(next);
    setGeneration((n) => n + 1);
  };
  const submit = (text: string) => {
    if (text.trim()) history.current.push(text);
    cursor.current = history.current.length;
    replace('');
    onSubmit(text);
  };

  useInput(
    (input, key) => {
      if (key.ctrl && input === 'c') return onQuit();
      if (key.return) return submit(line.current);
      if (key.ctrl && input) {
        // TextInput would insert the letter of any Ctrl key; we drop it and apply the usual meaning.
        const current = beforeChange.current ?? line.current;
        swallow.current = true;
        thisKey(() => {
          swallow.current = false;
        });
        if (input === 'd') return current === '' ? onQuit() : replace(current);
        if (input === 'u') return replace('');
        if (input === 'w') return replace(current.replace(/\s*\S+\s*$/, ''));
        return replace(current);
      }
      if (key.tab) {
        const { line: completed, candidates } = complete(line.current);
        if (completed !== line.current) replace(completed);
        else if (candidates.length > 1) onHint?.(candidates.map((name) => `/${name}`).join('  '));
        return;
      }
      if (key.upArrow || key.downArrow) {
        const entries = history.current;
        if (entries.length === 0) return;
        cursor.current = Math.max(0, Math.min(entries.length, cursor.current + (key.upArrow ? -1 : 1)));
        replace(entries[cursor.current] ?? '');
      }
    },
    { isActive: active },
  );

  // A paste can bring "text\r" in one chunk: TextInput would keep the \r in the line.
  const change = (raw: string) => {
    if (swallow.current) return;
    // A paste past the requirement limit is refused in one line instead of freezing the screen.
    if (raw.length > MAX_INPUT_CHARS) {
      onHint?.(`input over ${MAX_INPUT_CHARS / 1024} KB refused: put it in a file and refer to it`);
      return replace('');
    }
    const next = applyControls(raw);
    if (beforeChange.current === null) {
      beforeChange.current = line.current;
      thisKey(() => {
        beforeChange.current = null;
      });
    }
    if (!/[\r\n]/.test(next)) return set(next);
    const parts = next.split(/\r\n|\r|\n/);
    const rest = parts.pop() ?? '';
    // Enter after a line: submit it. A pasted block of several lines: one requirement or one answer,
    // never a line each (the third line of a paste must not answer a question the first one raised).
    if (parts.length === 1 && rest === '') return void (submit(parts[0]!), replace(''));
    submit([...parts, rest].join('\n').replace(/\n+$/, ''));
    replace('');
  };

  return (
    <Box>
      <Text bold color={active ? 'green' : 'gray'}>
        {prompt}{' '}
      </Text>
      <TextInput key={generation} value={value} onChange={change} onSubmit={ignore} placeholder={placeholder} focus={active} />
    </Box>
  );
}

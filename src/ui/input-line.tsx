import { Box, Text, useInput } from 'ink';
import TextInput from 'ink-text-input';
import { useRef, useState } from 'react';
import { complete } from '../cli/repl/commands.js';

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

/** The prompt: ink-text-input plus Tab completion of commands, history (↑/↓), Ctrl+C and Ctrl+D. */
export function InputLine({ onSubmit, onQuit, onHint, placeholder, active, prompt = '›' }: InputLineProps) {
  const [value, setValue] = useState('');
  // Remounting TextInput puts its cursor at the end after Tab or history replaced the value.
  const [generation, setGeneration] = useState(0);
  const history = useRef<string[]>([]);
  const cursor = useRef(0);
  const replace = (next: string) => {
    setValue(next);
    setGeneration((n) => n + 1);
  };
  const rendered = value;

  // TextInput inserts the "d" of Ctrl+D. Both key handlers run in the same input event, in an order
  // ink does not promise: drop a change that comes after ours, undo one that came before.
  const swallow = useRef(false);
  useInput(
    (input, key) => {
      if (key.ctrl && input === 'c') return onQuit();
      if (key.ctrl && input === 'd') {
        swallow.current = true;
        setImmediate(() => {
          swallow.current = false;
        });
        return rendered === '' ? onQuit() : replace(rendered);
      }
      if (key.tab) {
        const { line, candidates } = complete(rendered);
        if (line !== rendered) replace(line);
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

  const submit = (line: string) => {
    if (line.trim()) history.current.push(line);
    cursor.current = history.current.length;
    replace('');
    onSubmit(line);
  };

  // A paste (or a fast terminal) can deliver "text\r" in one chunk: TextInput would keep the \r.
  const change = (next: string) => {
    if (swallow.current) return;
    if (!/[\r\n]/.test(next)) return setValue(next);
    const parts = next.split(/\r\n|\r|\n/);
    const rest = parts.pop() ?? '';
    for (const line of parts) submit(line);
    replace(rest);
  };

  return (
    <Box>
      <Text bold color={active ? 'green' : 'gray'}>
        {prompt}{' '}
      </Text>
      <TextInput key={generation} value={value} onChange={change} onSubmit={submit} placeholder={placeholder} focus={active} />
    </Box>
  );
}

/**
 * The prompt tells when a line is begun and when it is cleared unsent: the REPL binds a plain line to
 * the question in front when its typing began (answer.ts). A chunk that brings its own Enter begins one too.
 */
import { render } from 'ink-testing-library';
import { afterEach, describe, expect, it } from 'vitest';
import { InputLine } from '../../src/ui/input-line.js';
import { waitUntil } from '../helpers/repl-session.js';

const unmounts: Array<() => void> = [];
afterEach(() => {
  for (const unmount of unmounts.splice(0)) unmount();
});

describe('the prompt begins and clears a line', () => {
  it('says begun on the first key, cleared when erased or Ctrl+C, and begun for a chunk with its own Enter; not cleared by the submit', async () => {
    const said: Array<boolean | string> = [];
    const app = render(<InputLine onSubmit={(line) => said.push(`sent ${line}`)} onQuit={() => undefined} onBegin={(begun) => said.push(begun)} placeholder="say something" active={true} />);
    unmounts.push(app.unmount);
    await waitUntil(() => app.stdin.listenerCount('readable') > 0 || undefined, 'ink to listen to stdin');
    const step = async (input: string, count: number) => {
      app.stdin.write(input);
      await waitUntil(() => said.length >= count || undefined, `${count} calls`);
    };
    await step('a', 1);
    app.stdin.write('b');
    await step('\u007f', 1); // one of two erased: still begun
    await step('\u007f', 2); // empty: cleared
    await step('x', 3);
    await step('\u0003', 4); // Ctrl+C clears the line
    await step('yes\r', 6);
    await step('typed', 7);
    await step('\r', 8);
    expect(said).toEqual([true, false, true, false, true, 'sent yes', true, 'sent typed']);
  });
});

/**
 * A long paste in the prompt: shown around the cursor, not whole (laying out tens of KB again at every
 * chunk made a 60 KB paste take half a minute, and a paste near the 100 KB limit minutes), submitted
 * whole on Enter; over 100 KB refused with a hint as it arrives.
 */
import { render } from 'ink-testing-library';
import { afterEach, describe, expect, it } from 'vitest';
import { InputLine } from '../../src/ui/input-line.js';
import { lineOf, shownPart } from '../../src/ui/line-editor.js';
import { waitUntil } from '../helpers/repl-session.js';

const PASTE_START = '\u001b[200~';
const PASTE_END = '\u001b[201~';
const unmounts: Array<() => void> = [];
afterEach(() => {
  for (const unmount of unmounts.splice(0)) unmount();
});

function mount() {
  const submitted: string[] = [];
  const hints: string[] = [];
  const app = render(<InputLine onSubmit={(line) => submitted.push(line)} onQuit={() => undefined} onHint={(text) => hints.push(text)} placeholder="say something" active={true} />);
  unmounts.push(app.unmount);
  return { app, submitted, hints };
}

/** A paste as a terminal sends it: the markers, then the text in chunks of 1 KB. */
function paste(app: ReturnType<typeof render>, text: string): void {
  app.stdin.write(PASTE_START);
  for (let at = 0; at < text.length; at += 1024) app.stdin.write(text.slice(at, at + 1024));
  app.stdin.write(PASTE_END);
}

describe('a long paste in the prompt', () => {
  it('is shown around the cursor with what is left out counted, and submitted whole on Enter', async () => {
    const { app, submitted } = mount();
    await waitUntil(() => app.stdin.listenerCount('readable') > 0 || undefined, 'ink to listen to stdin');
    const text = `/post ${'word '.repeat(12_000)}end`;
    paste(app, text);
    await waitUntil(() => (app.lastFrame() ?? '').includes('end') || undefined, 'the end of the paste on screen');
    const frame = app.lastFrame()!;
    expect(frame).toContain(`[${text.length - 2_000} characters before] …`);
    expect(frame.length).toBeLessThan(2_500);
    app.stdin.write('\r');
    await waitUntil(() => submitted.length === 1 || undefined, 'the submission');
    expect(submitted).toEqual([text]);
  });

  it('over 100 KB is refused with a hint, and nothing is submitted', async () => {
    const { app, submitted, hints } = mount();
    await waitUntil(() => app.stdin.listenerCount('readable') > 0 || undefined, 'ink to listen to stdin');
    paste(app, 'x'.repeat(110 * 1024));
    await waitUntil(() => hints.length === 1 || undefined, 'the refusal');
    expect(hints).toEqual(['input over 100 KB refused: put it in a file and refer to it']);
    app.stdin.write('\r');
    await waitUntil(() => submitted.length === 1 || undefined, 'Enter on the empty line');
    expect(submitted).toEqual(['']);
  });

  it('shownPart keeps at most the given characters, mostly before the cursor, and never half a surrogate pair', () => {
    expect(shownPart(lineOf('short'))).toEqual({ text: 'short', cursor: 5, before: 0, after: 0 });
    const long = lineOf('a'.repeat(5_000));
    expect(shownPart(long, 100)).toEqual({ text: 'a'.repeat(100), cursor: 100, before: 4_900, after: 0 });
    expect(shownPart({ text: 'a'.repeat(5_000), cursor: 1_000 }, 100)).toEqual({ text: 'a'.repeat(100), cursor: 80, before: 920, after: 3_980 });
    // '😀' is two UTF-16 units: a window starting inside it starts after it.
    const emoji = { text: '😀'.repeat(100), cursor: 200 };
    const part = shownPart(emoji, 51);
    expect(part.text).toBe('😀'.repeat(25));
    expect(part.before + part.text.length + part.after).toBe(200);
  });
});

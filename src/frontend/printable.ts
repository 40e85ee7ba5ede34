/**
 * Text from outside — a file the lead read, a command's output, a hook's stderr, a model's words, a
 * task written by hand — as it may be shown on a terminal. Control characters other than tab and line
 * feed are written as `\u001b`-style escapes: raw, they could clear the screen, move the cursor over
 * earlier lines, or retitle the window (`ESC ] 2 ; … BEL`). A CRLF line end is a line end.
 */
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

export function printable(text: string): string {
  if (!CONTROL.test(text)) return text;
  CONTROL.lastIndex = 0;
  return text.replaceAll('\r\n', '\n').replace(CONTROL, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Whether UTF-8 `bytes` hold a control character (C1 ones are 0xC2 0x80–0x9F); most chunks do not, and pass as they are. */
function holdsControl(bytes: Uint8Array): boolean {
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i]!;
    if ((byte < 0x20 && byte !== 0x09 && byte !== 0x0a) || byte === 0x7f || (byte === 0xc2 && (bytes[i + 1] ?? 0) >= 0x80 && (bytes[i + 1] ?? 0) <= 0x9f)) return true;
  }
  return false;
}

type Write = NodeJS.WriteStream['write'];
const guarded = new Map<NodeJS.WriteStream, Write>();

/**
 * Everything written to `streams` from now on passes `printable`: the command's text output (run,
 * events, tasks, show, line mode), which writes no control sequence of its own. JSON output is not
 * changed in meaning: JSON.stringify escapes what is below 0x20 already, and a raw DEL or C1
 * character, which it leaves, can only stand inside a string, where its escape means the same.
 * The ink app writes its own sequences: it takes the streams back first (`unguardOutput`).
 */
export function guardOutput(streams: NodeJS.WriteStream[] = [process.stdout, process.stderr]): void {
  for (const stream of streams) {
    if (guarded.has(stream)) continue;
    const write = stream.write;
    guarded.set(stream, write);
    stream.write = function (this: NodeJS.WriteStream, chunk: unknown, ...rest: unknown[]) {
      const text = typeof chunk === 'string' ? printable(chunk) : chunk instanceof Uint8Array && holdsControl(chunk) ? printable(Buffer.from(chunk).toString('utf8')) : chunk;
      return (write as (chunk: unknown, ...rest: unknown[]) => boolean).call(this, text, ...rest);
    } as Write;
  }
}

/** The streams' own writes back (the ink app, whose frames are control sequences). */
export function unguardOutput(): void {
  for (const [stream, write] of guarded) stream.write = write;
  guarded.clear();
}

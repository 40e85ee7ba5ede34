/** Sizes as a person reads them, and text cut to a size with a note saying what is missing. */

const KB = 1024;
const MB = 1024 * 1024;

/** `812 B`, `14.2 KB`, `1.2 MB`. */
export function formatBytes(bytes: number): string {
  if (bytes < KB) return `${bytes} B`;
  if (bytes < MB) return `${(bytes / KB).toFixed(1)} KB`;
  return `${(bytes / MB).toFixed(1)} MB`;
}

/** A wait as a person reads it: `350 ms`, `12 s`, past two minutes `60 min`. */
export function formatWait(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  return ms >= 120_000 ? `${Math.round(ms / 60_000)} min` : `${Math.round(ms / 1000)} s`;
}

/** A limit in whole megabytes where it is one (`16 MB`), else as formatBytes. */
export function formatLimit(bytes: number): string {
  return bytes % MB === 0 ? `${bytes / MB} MB` : formatBytes(bytes);
}

export interface CutOptions {
  /** Characters kept from the end too (the rest of `maxChars` from the start): output ends with its errors. */
  tail?: number;
}

/**
 * `text` in at most `maxChars` characters (plus the note): the start (and `tail` characters of the
 * end), and between them `… cut: 1.2 MB more; <where>`, so the reader knows what is missing and
 * where the whole is. `where` reads as the rest of the sentence: "the whole is in task #7's
 * description", "not kept".
 */
export function cutText(text: string, maxChars: number, where: string, options: CutOptions = {}): string {
  if (text.length <= maxChars) return text;
  const tailChars = Math.min(options.tail ?? 0, Math.floor(maxChars / 2));
  const head = safeSlice(text, 0, Math.max(0, maxChars - tailChars));
  const tail = tailChars > 0 ? safeSlice(text, text.length - tailChars, text.length) : '';
  const cutBytes = Buffer.byteLength(text) - Buffer.byteLength(head) - Buffer.byteLength(tail);
  const note = `… cut: ${formatBytes(cutBytes)} more; ${where}`;
  return tail ? `${head}\n${note} …\n${tail}` : `${head}\n${note}`;
}

/** A slice that never splits a surrogate pair (half a character would be an invalid string). */
function safeSlice(text: string, start: number, end: number): string {
  let from = start;
  let to = end;
  if (from > 0 && isLowSurrogate(text.charCodeAt(from))) from++;
  if (to < text.length && to > 0 && isLowSurrogate(text.charCodeAt(to))) to--;
  return text.slice(from, Math.max(from, to));
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

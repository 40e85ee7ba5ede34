/** `n` and the noun for it: `1 issue`, `2 issues`, `2 processes` (`many` where adding an s is wrong). */
export function counted(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** How long ago `iso` was: `3 s`, `4 min`, `2 h`, `5 d` (a dash for no time). */
export function age(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return '—';
  const seconds = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (seconds < 60) return `${seconds} s`;
  if (seconds < 3600) return `${Math.round(seconds / 60)} min`;
  if (seconds < 86_400) return `${Math.round(seconds / 3600)} h`;
  return `${Math.round(seconds / 86_400)} d`;
}

/** Edit distance with transpositions (optimal string alignment), for "did you mean". */
function distance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * The one of `candidates` that `word` is most likely a slip for, or null. Past two edits (or half
 * the word) it is another word, not a slip: /frobnicate is not /reject.
 */
export function closestWord(word: string, candidates: readonly string[]): string | null {
  const [best] = candidates.map((candidate) => ({ candidate, edits: distance(word, candidate) })).sort((a, b) => a.edits - b.edits);
  return best && best.edits <= Math.min(2, Math.floor(word.length / 2)) ? best.candidate : null;
}

/** `unknown role 'enginer' — did you mean engineer? (roles: …)`: how every check of a role names a slip. */
export function unknownRole(role: string, known: Iterable<string>): string {
  const roles = [...known];
  const near = closestWord(role, roles);
  return `unknown role '${role}'${near ? ` — did you mean ${near}?` : ''} (roles: ${roles.join(', ')})`;
}

/** `text` on one line (every run of white space one space), at most `max` characters with `…` when cut. */
export function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat.length <= max) return flat;
  // Cut by characters, not UTF-16 units: an emoji is never split into half a pair.
  const chars = Array.from(flat);
  return chars.length > max ? `${chars.slice(0, max - 1).join('')}…` : flat;
}

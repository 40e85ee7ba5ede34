/** What the providers share: error text that is one line, and the cause of a failed connection. */

/** The useful part of a failed fetch (ECONNREFUSED, ENOTFOUND…), which sits a few causes deep. */
export function connectionDetail(error: Error): string {
  let current: unknown = error.cause;
  let fallback: string | undefined;
  for (let depth = 0; current instanceof Error && depth < 5; depth++) {
    const code = (current as NodeJS.ErrnoException).code;
    if (typeof code === 'string') return code;
    if (current.message && current.message !== 'fetch failed') fallback ??= current.message;
    current = current.cause;
  }
  return fallback ?? 'connection failed';
}

export function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

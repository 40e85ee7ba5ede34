/** PostgreSQL board URLs, without loading the driver (the file board never loads it). */

/** The URL as shown to a person: the password replaced by `***`. */
export function describeUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    // libpq takes the password as a parameter too (`?password=…`), and ssl keys by path or inline.
    for (const key of [...parsed.searchParams.keys()]) {
      if (/pass|secret|key|token/i.test(key)) parsed.searchParams.set(key, '***');
    }
    return parsed.toString().replace(/%2A%2A%2A/g, '***');
  } catch {
    // Not a URL: shown as typed, with whatever sits where a password would be masked all the same.
    return url.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/@\s]*:)[^@\s]*@/i, '$1***@').replace(/(pass\w*|secret|key|token)=[^&\s]*/gi, '$1=***');
  }
}

/** Why `url` cannot name a board, or null: it needs a host and a database. */
export function urlProblem(url: string): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    const port = /^[a-z][a-z0-9+.-]*:\/\/(?:[^@/]*@)?[^/:]*:([^/?#]*)/i.exec(url)?.[1];
    if (port !== undefined && !/^\d+$/.test(port)) return `its port '${port}' is not a number (postgres://user:password@host:5432/database)`;
    if (port !== undefined && Number(port) > 65_535) return `its port ${port} is out of range (1-65535)`;
    return 'not a URL autoteam can read (postgres://user:password@host:5432/database)';
  }
  if (!parsed.hostname) return 'it names no host (postgres://user:password@host:5432/database)';
  if (!parsed.pathname.replace(/^\//, '')) return 'it names no database (postgres://user:password@host:5432/database)';
  return null;
}

export function isPostgresUrl(location: string): boolean {
  return /^postgres(ql)?:\/\//i.test(location);
}

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
    // Not a URL: shown as typed, with whatever could be a password masked all the same.
    const parts = authority(url);
    if (!parts) return url.replace(SECRET_PARAM, '$1=***');
    const { scheme, userinfo, hostport, rest } = parts;
    const user = userinfo === null ? '' : `${userinfo.includes(':') ? `${userinfo.slice(0, userinfo.indexOf(':'))}:***` : userinfo}@`;
    // Without an `@`, "user:password" reads as host:port: a port that is not a number is masked too.
    // After one it is what was typed for the port, shown so that the mistake can be seen.
    const host = /^(\[[^\]]*\]|[^:]*)(:(.*))?$/.exec(hostport)!;
    const port = host[2] === undefined ? '' : userinfo !== null || /^\d*$/.test(host[3]!) ? host[2] : ':***';
    return `${scheme}://${user}${host[1]}${port}${rest.replace(SECRET_PARAM, '$1=***')}`;
  }
}

const SECRET_PARAM = /(\w*(?:pass|secret|key|token)\w*)=[^&#\s]*/gi;

/** `scheme://userinfo@host:port/rest` split apart (the userinfo up to the last `@`), or null. */
function authority(url: string): { scheme: string; userinfo: string | null; hostport: string; rest: string } | null {
  const match = /^([a-z][a-z0-9+.-]*):\/\/([^/?#]*)(.*)$/is.exec(url);
  if (!match) return null;
  const [, scheme, auth, rest] = match as unknown as [string, string, string, string];
  const at = auth.lastIndexOf('@');
  return { scheme, userinfo: at < 0 ? null : auth.slice(0, at), hostport: at < 0 ? auth : auth.slice(at + 1), rest };
}

const EXAMPLE = '(postgres://user:password@host:5432/database)';

/** Why `url` cannot name a board, or null: it needs a host and a database. Never echoes a password. */
export function urlProblem(url: string): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    const parts = authority(url);
    if (!parts) return `not a URL autoteam can read ${EXAMPLE}`;
    if (!parts.hostport) return `it names no host ${EXAMPLE}; for a Unix socket, postgres://user@localhost/database?host=/run/postgresql`;
    const port = /^(?:\[[^\]]*\]|[^:]*):(.*)$/.exec(parts.hostport)?.[1];
    if (port !== undefined && !/^\d+$/.test(port)) return `its port is not a number ${EXAMPLE}`;
    if (port !== undefined && (Number(port) < 1 || Number(port) > 65_535)) return `its port ${port} is out of range (1-65535)`;
    return `not a URL autoteam can read ${EXAMPLE}`;
  }
  if (!parsed.hostname) return `it names no host ${EXAMPLE}`;
  if (parsed.port === '0') return 'its port 0 is out of range (1-65535)';
  if (!parsed.pathname.replace(/^\//, '')) return `it names no database ${EXAMPLE}`;
  return null;
}

export function isPostgresUrl(location: string): boolean {
  return /^postgres(ql)?:\/\//i.test(location);
}

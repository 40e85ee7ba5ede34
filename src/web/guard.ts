import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import os from 'node:os';

/**
 * Who may use the web board, checked on every request before anything else:
 * - `Host` must name this server (the bound address, `localhost` or a loopback address, and on a
 *   wildcard bind this machine's names and addresses) at its port: a page on another site whose name
 *   was re-pointed at 127.0.0.1 (DNS rebinding) is refused;
 * - the token: `?token=` once (exchanged for an HttpOnly SameSite=Strict cookie, and the address
 *   without it), then the cookie; scripts may send `Authorization: Bearer <token>`;
 * - a request that changes something from a browser (with the cookie) needs an `Origin` of this very
 *   server and the page's CSRF token in `X-CSRF-Token`.
 * `autoteam mcp serve --http` keeps the Host rule and takes the token only as Bearer (`checkBearer`).
 */
export interface GuardOptions {
  token: string;
  /** The address the server is bound to, as typed (`127.0.0.1`, `0.0.0.0`, `::`, a name). */
  host: string;
  port: number;
}

export type Verdict =
  | { ok: true; via: 'cookie' | 'bearer' | 'query' }
  | { ok: false; status: number; message: string };

const WILDCARDS = new Set(['0.0.0.0', '::', '[::]']);
const LOOPBACK = ['localhost', '127.0.0.1', '[::1]'];

export class WebGuard {
  /** The token a page sends back on every change (it is in the page, never in a cookie). */
  readonly csrf = randomBytes(24).toString('base64url');
  private readonly hosts: Set<string>;

  constructor(private readonly options: GuardOptions) {
    this.hosts = allowedHosts(options.host);
  }

  /** The cookie's name: one per port, since cookies do not tell the ports of one host apart. */
  get cookieName(): string {
    return `autoteam_${this.options.port}`;
  }

  /** The Set-Cookie value for a visitor who showed the token. */
  cookie(): string {
    return `${this.cookieName}=${this.options.token}; HttpOnly; SameSite=Strict; Path=/`;
  }

  /** Whether the request names this server as its Host. */
  checkHost(request: IncomingMessage): Verdict | null {
    const raw = request.headers.host ?? '';
    const match = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(raw.trim().toLowerCase());
    const name = match?.[1] ?? '';
    const port = Number(match?.[2] ?? 80);
    if (!this.hosts.has(name) || port !== this.options.port) {
      return { ok: false, status: 403, message: `Host '${raw}' is not this server's address (a page on another site cannot reach the board)` };
    }
    return null;
  }

  /** Host, then the token. */
  check(request: IncomingMessage, url: URL): Verdict {
    const host = this.checkHost(request);
    if (host) return host;
    const bearer = this.bearer(request);
    if (bearer) return bearer;
    const query = url.searchParams.get('token');
    if (query !== null) return this.matches(query) ? { ok: true, via: 'query' } : { ok: false, status: 401, message: 'wrong token' };
    const cookie = cookieValue(request.headers.cookie, this.cookieName);
    if (cookie === null) return { ok: false, status: 401, message: 'no token: open the address autoteam web printed (it ends in ?token=…)' };
    return this.matches(cookie) ? { ok: true, via: 'cookie' } : { ok: false, status: 401, message: 'wrong token' };
  }

  /**
   * Host, then `Authorization: Bearer` and nothing else: for a client that is not a browser (an MCP
   * client), which has no use for the cookie, and whose token in an address would land in logs.
   */
  checkBearer(request: IncomingMessage, missing: string): Verdict {
    return this.checkHost(request) ?? this.bearer(request) ?? { ok: false, status: 401, message: missing };
  }

  /** The verdict on the request's Bearer token, or null when it has none. */
  private bearer(request: IncomingMessage): Verdict | null {
    const bearer = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '')?.[1];
    if (bearer === undefined) return null;
    return this.matches(bearer) ? { ok: true, via: 'bearer' } : { ok: false, status: 401, message: 'wrong token' };
  }

  /** A change from a browser: same origin, and the page's CSRF token. Null when allowed. */
  checkChange(request: IncomingMessage, via: 'cookie' | 'bearer' | 'query'): Verdict | null {
    if (via === 'bearer') return null; // a browser never adds it on its own: not forgeable cross-site
    const origin = request.headers.origin;
    const expected = `http://${request.headers.host}`;
    if (origin !== expected) return { ok: false, status: 403, message: `a change must come from this page (Origin ${origin ?? 'missing'}, expected ${expected})` };
    const sent = request.headers['x-csrf-token'];
    if (typeof sent !== 'string' || !same(sent, this.csrf)) return { ok: false, status: 403, message: 'missing or wrong X-CSRF-Token' };
    return null;
  }

  private matches(candidate: string): boolean {
    return same(candidate, this.options.token);
  }
}

/** A token for a new server: 32 random bytes. */
export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

/** True for an address only this machine can reach. */
export function isLoopback(host: string): boolean {
  return LOOPBACK.includes(host.toLowerCase()) || host === '::1' || /^127\./.test(host);
}

function allowedHosts(bound: string): Set<string> {
  const hosts = new Set(LOOPBACK);
  const name = bound.toLowerCase();
  if (WILDCARDS.has(name)) {
    // Bound to every interface: this machine's names and addresses are its own.
    hosts.add(os.hostname().toLowerCase());
    for (const addresses of Object.values(os.networkInterfaces())) {
      for (const address of addresses ?? []) hosts.add(address.family === 'IPv6' ? `[${address.address.toLowerCase()}]` : address.address);
    }
  } else {
    hosts.add(name.includes(':') && !name.startsWith('[') ? `[${name}]` : name);
  }
  return hosts;
}

function cookieValue(header: string | undefined, name: string): string | null {
  for (const part of (header ?? '').split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return value.join('=');
  }
  return null;
}

function same(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

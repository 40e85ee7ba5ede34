import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { AutoteamError, serializeError } from '../core/errors.js';
import type { LeadControls } from '../core/lead/lead-api.js';
import { checkRequirement } from '../core/stages/requirement.js';
import { redact, secretValues } from '../core/trace/redact.js';
import { readAsset } from './assets.js';
import { readBody, RequestError } from './body.js';
import { LiveFeed } from './feed.js';
import { isLoopback, newToken, WebGuard } from './guard.js';
import { pipelineView } from './views.js';
import { describeZodError } from '../core/board/schemas.js';
import { waitsForRole } from '../core/lead/who-takes.js';

export interface WebBoardOptions {
  controls: LeadControls;
  /** Default 127.0.0.1. */
  host?: string;
  /** 0 picks a free port. Default 7878. */
  port?: number;
  /** Default: 32 random bytes. */
  token?: string;
}

export interface WebBoard {
  /** The address to open, with the token. */
  url: string;
  port: number;
  token: string;
  /** Tells the pages the last state and why it stops (`the run ended: …`), then stops. */
  close(reason?: string): Promise<void>;
}

const TextBody = z.object({ text: z.string().trim().min(1, 'empty').max(20_000, 'longer than 20,000 characters') });
// A requirement is held to the command line's rule (checkRequirement: at most 100 KB), not to an answer's.
// Blank or not, the requirement's own words are checkRequirement's; `stage: null` is a stage not given.
const PostBody = z.object({ text: z.string(), stage: z.string().min(1).nullish().transform((stage) => stage ?? undefined) });
const PlanBody = z.object({ approve: z.boolean(), feedback: z.string().max(20_000).optional() });

const SECURITY_HEADERS = {
  'content-security-policy': "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
};

/**
 * The web board: one page (the built client), the board's state as JSON, its live feed (SSE), and
 * the person's actions, each the same LeadControls call the REPL makes. Every request passes the
 * guard (Host, token, and for changes Origin and CSRF token; guard.ts) before it is routed.
 */
export async function startWebBoard(options: WebBoardOptions): Promise<WebBoard> {
  const host = options.host ?? '127.0.0.1';
  const token = options.token ?? newToken();
  const { controls } = options;
  // The environment's secrets, read once: every card of a big board passes through `safe`.
  const secrets = secretValues();
  const safe = (text: string) => redact(text, secrets);
  const feed = new LiveFeed(controls, safe, /^postgres(ql)?:\/\//i.test(controls.snapshot().board.location));
  await feed.start();
  let guard: WebGuard | null = null;

  const server = http.createServer((request, response) => {
    void handle(request, response).catch((error: unknown) => {
      // A refused action (no such question, a pipeline not approved yet) is a 409, the person's to
      // read; a requirement or start stage the lead refuses is the request's fault, a 400; an action
      // on a pipeline that does not exist is a 404, as reading it is.
      const { code, message } = serializeError(error);
      const status = error instanceof RequestError ? error.status : code === 'BOARD_UNREACHABLE' ? 503 : code === 'NOT_FOUND' ? 404 : code === 'INVALID_STAGE' || code === 'INVALID_REQUIREMENT' ? 400 : error instanceof AutoteamError ? 409 : 500;
      if (!response.headersSent) send(response, status, { error: message, code });
      else response.end();
    });
  });

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) response.setHeader(name, value);
    const url = new URL(request.url ?? '/', 'http://localhost');
    let verdict = guard!.check(request, url);
    // A stale link (an old token in the address) from a browser that holds a good cookie: the cookie decides.
    if (!verdict.ok && verdict.status === 401 && url.searchParams.has('token')) {
      url.searchParams.delete('token');
      const withCookie = guard!.check(request, url);
      if (withCookie.ok) verdict = { ok: true, via: 'query' };
    }
    if (!verdict.ok) return refuse(request, response, verdict.status, verdict.message);
    if (verdict.via === 'query') {
      // The token leaves the address bar (and the history) at once; the cookie carries it from now on.
      url.searchParams.delete('token');
      response.writeHead(303, { location: `${url.pathname}${url.search}`, 'set-cookie': guard!.cookie(), 'cache-control': 'no-store' });
      return void response.end();
    }
    if (request.method === 'GET' || request.method === 'HEAD') return get(url, response);
    if (request.method !== 'POST') return send(response, 405, { error: `${request.method} is not served` });
    const refused = guard!.checkChange(request, verdict.via);
    if (refused && !refused.ok) return send(response, refused.status, { error: refused.message });
    const body = await readBody(request);
    return send(response, 200, await act(url.pathname, body));
  }

  async function get(url: URL, response: ServerResponse): Promise<void> {
    const path = url.pathname;
    if (path === '/' || path === '/index.html') {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
      return void response.end(page(guard!.csrf));
    }
    const asset = path.startsWith('/assets/') ? readAsset(path.slice('/assets/'.length)) : null;
    if (asset) {
      response.writeHead(200, { 'content-type': asset.type, 'cache-control': 'no-cache' });
      return void response.end(asset.body);
    }
    if (path === '/api/events') return feed.add(response);
    if (path === '/api/state') return send(response, 200, feed.current);
    let match = /^\/api\/pipelines\/(\d+)$/.exec(path);
    if (match) {
      const view = await pipelineView(controls, Number(match[1]));
      return view ? send(response, 200, view) : send(response, 404, { error: `no pipeline #${match[1]}` });
    }
    match = /^\/api\/pipelines\/(\d+)\/diff$/.exec(path);
    if (match) return send(response, 200, { diff: await controls.diff(Number(match[1])) });
    match = /^\/api\/tasks\/(\d+)$/.exec(path);
    if (match) {
      const task = controls.task(Number(match[1]));
      if (task) return send(response, 200, task);
      // Its file is there and does not read (broken by hand, too large): said, not taken for no task.
      const unread = controls.snapshot().board.problems.find((problem) => problem.includes(`task_${match![1]}.json`));
      return unread ? send(response, 422, { error: `task #${match[1]} cannot be read: ${unread}` }) : send(response, 404, { error: `no task #${match[1]}` });
    }
    // An action's address read with GET: there is something here, but only to POST to.
    if (/^\/api\/(requirements|questions\/[\w.-]+\/answer|pipelines\/\d+\/(cancel|retry|merge|discard)|plans\/[\w.-]+)$/.test(path)) {
      response.setHeader('allow', 'POST');
      return send(response, 405, { error: `${path} takes a POST (with this page's CSRF token), not a GET` });
    }
    return send(response, 404, { error: `nothing at ${path}` });
  }

  /** The person's actions: the same calls as the REPL's commands. */
  async function act(path: string, body: unknown): Promise<unknown> {
    if (path === '/api/requirements') {
      const { text, stage } = parse(PostBody, body);
      try {
        checkRequirement(text);
      } catch (error) {
        throw new RequestError(400, `text: ${(error as Error).message}`);
      }
      const task = await controls.post(text, stage, 'the web board');
      // Posted where no teammate takes its first stage: said to the poster, as the REPL and `autoteam post` say it.
      const note = waitsForRole(task, controls.snapshot().team.members, controls.leader());
      return { task: task.id, pipeline: task.pipeline, line: `posted pipeline #${task.pipeline}: task #${task.id} (${task.stage})`, ...(note ? { note } : {}) };
    }
    let match = /^\/api\/questions\/([\w.-]+)\/answer$/.exec(path);
    if (match) {
      const { text } = parse(TextBody, body);
      // Not an id a question is ever given (`q-<task>-<n>`): no such question, rather than one gone.
      if (!/^q-\d+-\d+$/.test(match[1]!)) throw new RequestError(404, `no question '${match[1]}': a question's id is q-<task>-<n> (GET /api/state lists those waiting)`);
      const question = await controls.answer(text, match[1]).catch((error: unknown) => {
        if (serializeError(error).code === 'NO_QUESTION') throw new RequestError(409, 'this question is not waiting any more: it was answered elsewhere, or its task ended');
        throw error;
      });
      return { line: `answered ${question.from}'s question on task #${question.task}` };
    }
    match = /^\/api\/pipelines\/(\d+)\/(cancel|retry|merge|discard)$/.exec(path);
    if (match) {
      const id = Number(match[1]);
      switch (match[2]) {
        case 'cancel': {
          const cancelled = await controls.cancel(id, 'cancelled from the web board');
          return { line: cancelled.length ? `pipeline #${id} cancelled: ${cancelled.map((task) => `#${task}`).join(', ')}` : `pipeline #${id} was already cancelled: nothing to do` };
        }
        case 'retry': {
          const task = await controls.retry(id);
          return { line: `pipeline #${id} retried: task #${task.id} (${task.stage})` };
        }
        case 'merge':
          return { line: await controls.merge(id) };
        default:
          return { line: await controls.discard(id) };
      }
    }
    match = /^\/api\/plans\/([\w.-]+)$/.exec(path);
    if (match) {
      const { approve, feedback } = parse(PlanBody, body);
      await controls.decidePlan(match[1]!, approve, feedback);
      return { line: `plan ${match[1]} ${approve ? 'approved' : 'rejected'}` };
    }
    throw new RequestError(404, `nothing to do at ${path}`);
  }

  /** A refusal: one line of JSON for a script, a short page for a browser. */
  function refuse(request: IncomingMessage, response: ServerResponse, status: number, message: string): void {
    if (!(request.headers.accept ?? '').includes('text/html')) return send(response, status, { error: message });
    response.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    response.end(`<!doctype html><meta charset="utf-8"><title>autoteam web</title><h1>autoteam web</h1><p>${escapeHtml(message)}.</p>`);
  }

  function send(response: ServerResponse, status: number, body: unknown): void {
    response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
    response.end(safe(JSON.stringify(body)));
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      const why = error.code === 'EADDRINUSE' ? 'the port is in use' : error.code === 'ENOTFOUND' || error.code === 'EADDRNOTAVAIL' ? 'no such address on this machine' : error.message;
      reject(new AutoteamError(`cannot listen on ${host}:${options.port ?? 7878}: ${why}`, error.code === 'EADDRINUSE' ? 'PORT_IN_USE' : 'USAGE'));
    });
    server.listen(options.port ?? 7878, host, resolve);
  });
  const port = (server.address() as AddressInfo).port;
  guard = new WebGuard({ token, host, port });
  // A wildcard bind is opened here on 127.0.0.1; any other address as it is (an IPv6 one in brackets).
  const shown = host === '0.0.0.0' || host === '::' || host === '[::]' ? '127.0.0.1' : host;
  const url = `http://${shown.includes(':') && !shown.startsWith('[') ? `[${shown}]` : shown}:${port}/?token=${token}`;
  return {
    url,
    port,
    token,
    close: async (reason = 'autoteam web stopped') => {
      await feed.end(reason);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

function parse<T>(schema: z.ZodType<T>, body: unknown): T {
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  throw new RequestError(400, describeZodError(result.error, undefined, { root: 'body', max: 1 }));
}

/** The one page: the client app, the CSRF token in a meta tag (never in a cookie). */
function page(csrf: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="csrf" content="${csrf}"><title>autoteam</title><link rel="icon" href="data:,"><link rel="stylesheet" href="/assets/app.css"></head>
<body><div id="app"></div><script type="module" src="/assets/app.js"></script></body></html>`;
}

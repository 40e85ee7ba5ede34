/**
 * The web board's server over a BoardLead on a file board, as a script or a forged page would reach
 * it: the guard's rules (Host, token, cookie, Origin, CSRF, sizes), the actions and their refusals,
 * redaction of secrets, and the live feed's first message and deltas.
 */
import fs from 'node:fs';
import path from 'node:path';
import http from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { type Board, fileBoard } from '../../src/core/board/board.js';
import { BoardLead } from '../../src/core/lead/board-lead.js';
import { WebGuard } from '../../src/web/guard.js';
import { startWebBoard, type WebBoard } from '../../src/web/server.js';
import { tempRoot } from '../helpers/board-spawn.js';
import { HANG_MS, until } from '../helpers/agent-wait.js';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function serve(before: (board: Board) => Promise<unknown> = async () => undefined): Promise<{ web: WebBoard; board: Board; origin: string; cookie: string; csrf: string }> {
  const dir = tempRoot('autoteam-web-server-');
  const board = fileBoard(dir);
  await before(board);
  const lead = new BoardLead(board, { reconcileMs: 200 });
  await lead.start();
  const web = await startWebBoard({ controls: lead, port: 0 });
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }), () => board.close(), () => lead.close(), () => web.close());
  const origin = new URL(web.url).origin;
  const cookie = `autoteam_${web.port}=${web.token}`;
  const page = await (await fetch(`${origin}/`, { headers: { cookie } })).text();
  const csrf = /<meta name="csrf" content="([^"]+)">/.exec(page)![1]!;
  return { web, board, origin, cookie, csrf };
}

/** A request with any Host header (fetch does not let one be set). */
function raw(port: number, options: { path: string; host: string; method?: string; headers?: Record<string, string>; body?: string }): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = http.request({ host: '127.0.0.1', port, path: options.path, method: options.method ?? 'GET', headers: { host: options.host, ...options.headers } }, (response) => {
      let body = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode!, body }));
    });
    request.on('error', reject);
    request.end(options.body);
  });
}

describe('the web board server', () => {
  it('lets in only its own Host, with the token; trades the token for a strict cookie', async () => {
    const { web, origin, cookie } = await serve();
    const path = '/api/state';
    for (const host of [`127.0.0.1:${web.port}`, `localhost:${web.port}`, `LOCALHOST:${web.port}`, `[::1]:${web.port}`]) {
      expect((await raw(web.port, { path, host, headers: { cookie } })).status, host).toBe(200);
    }
    for (const host of [`attacker.example:${web.port}`, `127.0.0.1:${web.port + 1}`, '127.0.0.1', `127.0.0.1.nip.io:${web.port}`]) {
      const reply = await raw(web.port, { path, host, headers: { cookie } });
      expect(reply.status, host).toBe(403);
      expect(JSON.parse(reply.body).error).toMatch(/is not this server's address/);
    }
    expect((await fetch(`${origin}${path}`)).status).toBe(401);
    expect((await fetch(`${origin}${path}`, { headers: { cookie: `autoteam_${web.port}=nope` } })).status).toBe(401);
    expect((await fetch(`${origin}${path}`, { headers: { authorization: `Bearer ${web.token}` } })).status).toBe(200);
    expect((await fetch(`${origin}${path}`, { headers: { authorization: 'Bearer nope' } })).status).toBe(401);
    const visit = await fetch(web.url, { redirect: 'manual' });
    expect(visit.status).toBe(303);
    expect(visit.headers.get('location')).toBe('/');
    expect(visit.headers.get('set-cookie')).toBe(`autoteam_${web.port}=${web.token}; HttpOnly; SameSite=Strict; Path=/`);
    // A browser is shown a page, not JSON; a stale link with a good cookie goes through on the cookie.
    const refused = await fetch(`${origin}/`, { headers: { accept: 'text/html' } });
    expect(refused.status).toBe(401);
    expect(await refused.text()).toMatch(/<p>no token: open the address autoteam web printed/);
    const stale = await fetch(`${origin}/?token=an-old-token`, { headers: { cookie }, redirect: 'manual' });
    expect(stale.status).toBe(303);
    expect(stale.headers.get('location')).toBe('/');
    expect((await fetch(`${origin}/?token=an-old-token`, { redirect: 'manual' })).status).toBe(401);
    const pageReply = await fetch(`${origin}/`, { headers: { cookie } });
    expect(pageReply.headers.get('content-security-policy')).toMatch(/script-src 'self'/);
    expect(pageReply.headers.get('referrer-policy')).toBe('no-referrer');
  });

  it('takes a change from its own page only (Origin and CSRF token), and caps the body', async () => {
    const { origin, cookie, csrf } = await serve();
    const post = (headers: Record<string, string>, body: string = JSON.stringify({ text: 'Count words in a file' })) =>
      fetch(`${origin}/api/requirements`, { method: 'POST', headers: { cookie, 'content-type': 'application/json', ...headers }, body });
    expect((await post({})).status).toBe(403);
    expect((await post({ origin: 'http://evil.example' , 'x-csrf-token': csrf })).status).toBe(403);
    expect((await post({ origin, 'x-csrf-token': 'wrong' })).status).toBe(403);
    const ok = await post({ origin, 'x-csrf-token': csrf });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ task: 1, pipeline: 1, line: 'posted pipeline #1: task #1 (requirements)', note: expect.stringMatching(/^pipeline #1 waits: task #1 \(requirements\) is for a teammate of role analyst/) });
    // A requirement as long as the command line takes (100 KB) is taken; one longer is refused naming the field.
    const long = await post({ origin, 'x-csrf-token': csrf }, JSON.stringify({ text: 'x'.repeat(100 * 1024) }));
    expect(long.status).toBe(200);
    expect(await long.json()).toMatchObject({ pipeline: 2 });
    const tooLong = await post({ origin, 'x-csrf-token': csrf }, JSON.stringify({ text: 'x'.repeat(100 * 1024 + 1) }));
    expect(tooLong.status).toBe(400);
    expect(await tooLong.json()).toMatchObject({ error: 'text: a requirement is at most 100 KB (this one is 101 KB): put the details in a file and refer to it' });
    const big = await post({ origin, 'x-csrf-token': csrf }, JSON.stringify({ text: 'x'.repeat(300_000) }));
    expect(big.status).toBe(413);
    // Chunked, with no length declared: refused as it passes the limit, answered with the 413 rather than a reset.
    const chunked = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const { hostname, port } = new URL(origin);
      const request = http.request({ hostname, port, path: '/api/requirements', method: 'POST', headers: { cookie, origin, 'x-csrf-token': csrf, 'content-type': 'application/json', 'transfer-encoding': 'chunked' } }, (response) => {
        let body = '';
        response.on('data', (chunk: Buffer) => (body += chunk.toString()));
        response.on('end', () => resolve({ status: response.statusCode!, body }));
      });
      request.on('error', reject);
      request.write('{"text": "');
      for (let i = 0; i < 40; i++) request.write('x'.repeat(16 * 1024));
      request.end('"}');
    });
    expect(chunked).toEqual({ status: 413, body: JSON.stringify({ error: 'the body is larger than 262144 bytes', code: 'WEB_REQUEST' }) });
    const bad = await post({ origin, 'x-csrf-token': csrf }, '{not json');
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: 'the body is not JSON' });
    // Blank, or only zero-width characters: the command line's words for both.
    for (const text of ['  ', '\u200b\u200b']) {
      const empty = await post({ origin, 'x-csrf-token': csrf }, JSON.stringify({ text }));
      expect(empty.status).toBe(400);
      expect(await empty.json()).toMatchObject({ error: 'text: a requirement cannot be empty' });
    }
    // Half of a character, as JSON can write it: refused, not posted as U+FFFD.
    const half = await post({ origin, 'x-csrf-token': csrf }, '{"text": "Count \\ud800 words"}');
    expect(half.status).toBe(400);
    expect(await half.json()).toMatchObject({ error: 'text: a requirement must be whole text: it holds half of a character (an unpaired UTF-16 surrogate)' });
    // Bytes that are not UTF-8 arrive as U+FFFD: refused, as the command line refuses them in an argument.
    const bytes = await fetch(`${origin}/api/requirements`, { method: 'POST', headers: { cookie, 'content-type': 'application/json', origin, 'x-csrf-token': csrf }, body: Buffer.concat([Buffer.from('{"text": "bad '), Buffer.from([0xff, 0xfe]), Buffer.from(' bytes"}')]) });
    expect(bytes.status).toBe(400);
    expect(await bytes.json()).toMatchObject({ error: 'text: a requirement must be UTF-8 text: this one holds bytes that are not (shown as �)' });
    // `stage: null` is a stage not given, as leaving it out is.
    const noStage = await post({ origin, 'x-csrf-token': csrf }, JSON.stringify({ text: 'Count words in a folder', stage: null }));
    expect(noStage.status).toBe(200);
    expect(await noStage.json()).toMatchObject({ line: expect.stringMatching(/ \(requirements\)$/) });
    // A stage a pipeline cannot start at is the request's fault (400), named with the ones it can.
    const badStage = await post({ origin, 'x-csrf-token': csrf }, JSON.stringify({ text: 'Count words', stage: 'nowhere' }));
    expect(badStage.status).toBe(400);
    expect(await badStage.json()).toMatchObject({ error: expect.stringMatching(/^stage: a pipeline cannot start at 'nowhere' \(it starts at one of requirements/), code: 'INVALID_STAGE' });
    expect((await fetch(`${origin}/api/requirements`, { method: 'PUT', headers: { cookie } })).status).toBe(405);
  });

  it('says a posted requirement waits when no teammate of its first stage runs on the board, and says nothing once one does', async () => {
    const { board, origin, web } = await serve();
    const post = async (text: string) => (await fetch(`${origin}/api/requirements`, { method: 'POST', headers: { authorization: `Bearer ${web.token}`, 'content-type': 'application/json' }, body: JSON.stringify({ text }) })).json();
    expect(await post('Count words in a file')).toEqual({
      task: 1,
      pipeline: 1,
      line: 'posted pipeline #1: task #1 (requirements)',
      // No lead holds this board (the web board's own process reads it): a worker, or a lead, takes it.
      note: 'pipeline #1 waits: task #1 (requirements) is for a teammate of role analyst, and none runs: autoteam worker --role analyst on this board takes it, or a lead (autoteam) with its team',
    });
    await board.registry.join('analyst-1', 'analyst', { status: 'idle', pid: process.ppid });
    expect(await post('Count lines in a file')).toEqual({ task: 2, pipeline: 2, line: 'posted pipeline #2: task #2 (requirements)' });
  });

  it('acts as the REPL does: cancel, retry, plans, answers and merges refused with the reason', async () => {
    const { board, origin, web } = await serve();
    const auth = { authorization: `Bearer ${web.token}`, 'content-type': 'application/json' };
    const act = async (path: string, body: unknown = {}) => {
      const reply = await fetch(`${origin}${path}`, { method: 'POST', headers: auth, body: JSON.stringify(body) });
      return { status: reply.status, body: (await reply.json()) as { line?: string; error?: string } };
    };
    expect((await act('/api/requirements', { text: 'Count words in a file' })).status).toBe(200);
    expect(await act('/api/requirements', {})).toMatchObject({ status: 400, body: { error: 'text: missing (a string is expected)' } });
    expect(await act('/api/requirements', { text: 5 })).toMatchObject({ status: 400, body: { error: 'text: a string is expected, not a number' } });
    // Only where the command line may start one: a review with nothing submitted is refused.
    expect(await act('/api/requirements', { text: 'Count words', stage: 'review' })).toMatchObject({ status: 400, body: { error: "stage: a pipeline cannot start at 'review' (it starts at one of requirements, implementation)" } });
    expect(board.tasks.list()).toHaveLength(1);
    expect(await act('/api/pipelines/1/cancel')).toEqual({ status: 200, body: { line: 'pipeline #1 cancelled: #1' } });
    expect(await act('/api/pipelines/1/retry')).toEqual({ status: 200, body: { line: 'pipeline #1 retried: task #2 (requirements)' } });
    expect(await act('/api/questions/q-2-1/answer', { text: 'yes' })).toEqual({ status: 409, body: { error: 'this question is not waiting any more: it was answered elsewhere, or its task ended', code: 'WEB_REQUEST' } });
    expect(await act('/api/questions/999/answer', { text: 'yes' })).toEqual({ status: 404, body: { error: "no question '999': a question's id is q-<task>-<n> (GET /api/state lists those waiting)", code: 'WEB_REQUEST' } });
    const merge = await act('/api/pipelines/1/merge');
    expect(merge.status).toBe(409);
    expect(merge.body.error).toMatch(/pipeline #1/);
    expect((await act('/api/pipelines/99/cancel')).status).toBe(404);
    // An action's address read with GET is there, to POST to: 405 naming the method, not 404.
    const read = await fetch(`${origin}/api/pipelines/1/cancel`, { headers: { authorization: `Bearer ${web.token}` } });
    expect([read.status, read.headers.get('allow'), ((await read.json()) as { error: string }).error]).toEqual([405, 'POST', "/api/pipelines/1/cancel takes a POST (with this page's CSRF token), not a GET"]);
    expect((await fetch(`${origin}/api/pipelines/1/nothing`, { headers: { authorization: `Bearer ${web.token}` } })).status).toBe(404);

    // A plan waits while its teammate holds its task (a teammate's plan_approval, as it writes it).
    await board.registry.join('engineer', 'engineer', { status: 'working', task: 2 });
    expect(await board.tasks.claim(2, 'engineer')).toMatchObject({ ok: true });
    const plan = await board.requests.create({ kind: 'plan', from: 'engineer', to: 'lead', task: 2, plan: 'Write wc.py first.' });
    const plans = async () => ((await (await fetch(`${origin}/api/state`, { headers: auth })).json()) as { plans: Array<{ id: string; plan: string }> }).plans;
    // The page's state is read on board changes and every 2 s: the request shows up there.
    await expect.poll(plans, { timeout: HANG_MS, interval: 100 }).toEqual([expect.objectContaining({ id: plan.id, from: 'engineer', plan: 'Write wc.py first.' })]);
    expect(await act(`/api/plans/${plan.id}`, { approve: false, feedback: 'Tests first.' })).toEqual({ status: 200, body: { line: `plan ${plan.id} rejected` } });
    expect(board.requests.list({ kind: 'plan' })[0]).toMatchObject({ id: plan.id, status: 'rejected' });
    const [reply] = board.mailbox.peek('engineer');
    expect(reply).toMatchObject({ type: 'plan_approval_response', content: 'Tests first.', approve: false, requestId: plan.id });
    expect((await act(`/api/plans/${plan.id}`, { approve: true })).body.error).toMatch(/already rejected/);
    expect((await act(`/api/plans/${plan.id}`, { approve: 'yes' })).status).toBe(400);

    expect((await fetch(`${origin}/api/tasks/2`, { headers: auth })).status).toBe(200);
    expect((await fetch(`${origin}/api/tasks/404`, { headers: auth })).status).toBe(404);
    expect((await fetch(`${origin}/api/pipelines/404`, { headers: auth })).status).toBe(404);
    // A task file broken by hand is there and does not read: said, not "no task".
    fs.writeFileSync(path.join(board.rootDir, '.tasks', 'task_77.json'), '{"id": 77, "subj');
    const unread = async () => {
      const reply = await fetch(`${origin}/api/tasks/77`, { headers: auth });
      return { status: reply.status, body: (await reply.json()) as { error: string } };
    };
    await expect.poll(unread, { timeout: HANG_MS, interval: 100 }).toEqual({ status: 422, body: { error: expect.stringMatching(/^task #77 cannot be read: .*task_77\.json/) } });
  });

  it('never sends a secret of the environment', async () => {
    const secret = 'sk-ant-web-board-test-0123456789';
    process.env.AUTOTEAM_TEST_API_KEY = secret;
    cleanups.push(() => delete process.env.AUTOTEAM_TEST_API_KEY);
    const { origin, web } = await serve();
    const auth = { authorization: `Bearer ${web.token}`, 'content-type': 'application/json' };
    await fetch(`${origin}/api/requirements`, { method: 'POST', headers: auth, body: JSON.stringify({ text: `Use the key ${secret} to call the API` }) });
    const task = await (await fetch(`${origin}/api/tasks/1`, { headers: auth })).text();
    expect(task).not.toContain(secret);
    expect(task).toContain('[redacted]');
    const pipeline = await (await fetch(`${origin}/api/pipelines/1`, { headers: auth })).text();
    expect(pipeline).not.toContain(secret);
    // Cut short in a subject (`…the key sk-ant-web-boa…`), its start is the secret too.
    await fetch(`${origin}/api/requirements`, { method: 'POST', headers: auth, body: JSON.stringify({ text: `Write a Python script that uses the key ${secret} to list models` }) });
    const cut = (await (await fetch(`${origin}/api/tasks/2`, { headers: auth })).json()) as { subject: string };
    expect(cut.subject).toMatch(/\[redacted\]…$/);
    expect(cut.subject).not.toContain(secret.slice(0, 8));
  });

  it('feeds a page the whole board, then only what changed', async () => {
    const { origin, web } = await serve();
    const auth = { authorization: `Bearer ${web.token}`, 'content-type': 'application/json' };
    const messages: Array<{ event: string; data: string }> = [];
    const feed = await fetch(`${origin}/api/events`, { headers: auth });
    expect(feed.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reader = feed.body!.getReader();
    cleanups.push(() => reader.cancel());
    let buffer = '';
    void (async () => {
      for (;;) {
        const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
        if (done) return;
        buffer += new TextDecoder().decode(value);
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          messages.push({ event: /^event: (.*)$/m.exec(block)![1]!, data: /^data: (.*)$/m.exec(block)![1]! });
        }
      }
    })();
    await until(() => messages.length > 0, 'the first message');
    expect(messages[0]!.event).toBe('hello');
    expect(JSON.parse(messages[0]!.data)).toMatchObject({ cards: [], pipelines: [], events: [] });
    await fetch(`${origin}/api/requirements`, { method: 'POST', headers: auth, body: JSON.stringify({ text: 'Count words in a file' }) });
    const cards = await until(() => messages.find((message) => message.event === 'cards'), 'the new card');
    expect(JSON.parse(cards.data)).toEqual({ changed: [expect.objectContaining({ id: 1, status: 'pending', stage: 'requirements', pipeline: 1 })], removed: [] });
    await until(() => messages.some((message) => message.event === 'event' && JSON.parse(message.data).type === 'task_posted'), 'the task_posted event');
    await until(() => messages.some((message) => message.event === 'pipelines'), 'the pipeline');
    // A second page gets the board as it is now in its hello.
    const second = await fetch(`${origin}/api/events`, { headers: auth });
    const first = new TextDecoder().decode((await second.body!.getReader().read()).value);
    expect(first).toMatch(/^event: hello\ndata: \{"cards":\[\{"id":1,/);
    await second.body!.cancel().catch(() => undefined);
  });

  it("a page of a board with a history gets the log's last events in its hello, not only those since the server started", async () => {
    const { origin, web } = await serve(async (board) => {
      await board.tasks.create({ subject: 'Count words in a file', by: 'lead' });
      await board.sink.flush();
    });
    const feed = await fetch(`${origin}/api/events`, { headers: { authorization: `Bearer ${web.token}` } });
    const reader = feed.body!.getReader();
    cleanups.push(() => reader.cancel());
    let text = '';
    while (!text.includes('\n\n')) text += new TextDecoder().decode((await reader.read()).value);
    const hello = JSON.parse(/^data: (.*)$/m.exec(text)![1]!) as { events: Array<{ type: string; text: string }> };
    expect(hello.events).toContainEqual(expect.objectContaining({ type: 'task_posted', text: 'posted #1 task: Count words in a file' }));
  });

  it('tells its pages the last state and why it stops; a port in use is named', async () => {
    const { origin, web, board } = await serve();
    const feed = await fetch(`${origin}/api/events`, { headers: { authorization: `Bearer ${web.token}` } });
    let text = '';
    const reading = (async () => {
      const decoder = new TextDecoder();
      for await (const chunk of feed.body!) text += decoder.decode(chunk as Uint8Array, { stream: true });
    })();
    await until(() => text.includes('event: hello'), 'the hello');
    await board.tasks.create({ subject: 'Written just before the end' });
    await web.close('the run ended');
    await reading;
    // The last change reaches the page before it is told the server stops.
    expect(text.indexOf('Written just before the end')).toBeGreaterThan(0);
    expect(text.indexOf('Written just before the end')).toBeLessThan(text.indexOf('event: closed'));
    expect(text).toMatch(/event: closed\ndata: \{"reason":"the run ended"\}/);
    const taken = await startWebBoard({ controls: new BoardLead(board), port: 0 });
    cleanups.push(() => taken.close());
    await expect(startWebBoard({ controls: new BoardLead(board), port: taken.port })).rejects.toMatchObject({ code: 'PORT_IN_USE', message: `cannot listen on 127.0.0.1:${taken.port}: the port is in use` });
  });

  it('guard: a wildcard bind knows this machine\'s addresses; a named bind only its name', () => {
    const request = (host: string) => ({ headers: { host } }) as http.IncomingMessage;
    const wildcard = new WebGuard({ token: 't', host: '0.0.0.0', port: 8080 });
    expect(wildcard.checkHost(request('127.0.0.1:8080'))).toBeNull();
    expect(wildcard.checkHost(request('evil.example:8080'))).not.toBeNull();
    const named = new WebGuard({ token: 't', host: '10.1.2.3', port: 8080 });
    expect(named.checkHost(request('10.1.2.3:8080'))).toBeNull();
    expect(named.checkHost(request('10.1.2.4:8080'))).not.toBeNull();
  });
});

/**
 * The web board in a real headless chromium, on both backends: a requirement posted from the page,
 * the analyst's questions answered from the page, the cards followed to approved, the pipeline's
 * evidence opened; the refusals (no token, wrong token, a foreign Host, a cross-origin POST from
 * another page in the browser); and a database outage shown on the page and cleared.
 * - file board: `autoteam --web 0`, the web board beside the lead in one process;
 * - PostgreSQL: `autoteam web --board` on its own, beside a lead in another process.
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterEach, describe, expect, it } from 'vitest';
import { findPostgresBin, startPostgres } from '../../src/bench/postgres-server.js';
import { fileBoard } from '../../src/core/board/board.js';
import { chromiumPath, useBrowsers } from '../helpers/browser.js';
import { CliChild } from '../helpers/cli-child.js';
import { tempRoot } from '../helpers/board-spawn.js';
import { DOWNLOADS_REQUIREMENT, describeRun, runCli } from '../helpers/pipeline-cli.js';
import { personGit as git } from '../helpers/person-git.js';
import { HANG_MS } from '../helpers/agent-wait.js';

const children: CliChild[] = [];
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const child of children.splice(0)) await child.stop('SIGTERM');
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
const { launch } = useBrowsers();

function folder(prefix: string): string {
  const dir = tempRoot(prefix);
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function start(args: string[], cwd: string, stdin?: 'pipe'): CliChild {
  const child = CliChild.start(args, { cwd, ...(stdin ? { stdin } : {}) });
  children.push(child);
  return child;
}

/** The address a child printed (`autoteam web: <url>`), on stdout or stderr. */
async function webAddress(child: CliChild): Promise<string> {
  return child.waitFor(() => /autoteam web: (http:\/\/\S+)/.exec(`${child.lines.join('\n')}\n${child.stderr}`)?.[1], 'the web board\'s address');
}

/**
 * From the page: posts the requirement, answers every question the analyst asks as it appears, and
 * follows the pipeline's page until it is approved. Returns the pipeline's id.
 */
async function postAndFollow(page: Page): Promise<number> {
  await page.fill('[data-testid=requirement]', DOWNLOADS_REQUIREMENT);
  await page.click('[data-testid=post]');
  // This post's line: a line an earlier post left (a refusal) is on the page until the answer comes.
  const line = page.locator('[data-testid=post-line]', { hasText: /posted pipeline #\d+/ });
  await line.waitFor({ timeout: HANG_MS });
  const pipeline = Number(/posted pipeline #(\d+)/.exec((await line.textContent()) ?? '')?.[1]);
  expect(pipeline).toBeGreaterThan(0);
  await page.waitForSelector(`[data-testid=card-${pipeline}][data-stage=requirements]`);
  // For the README: the board while the analyst waits for an answer (AUTOTEAM_SCREENSHOTS=<folder>).
  const shots = process.env.AUTOTEAM_SCREENSHOTS;
  if (shots) {
    await page.waitForSelector('form[data-testid^=question-]', { timeout: HANG_MS });
    await page.setViewportSize({ width: 1400, height: 800 });
    await page.screenshot({ path: path.join(shots, 'web-board.png') });
  }
  await follow(page, pipeline);
  return pipeline;
}

/** On the pipeline's page: answers every question the analyst asks as it appears, until the pipeline is approved. */
async function follow(page: Page, pipeline: number): Promise<void> {
  await page.goto(`${new URL(page.url()).origin}/#/pipeline/${pipeline}`);
  let answered = 0;
  for (;;) {
    // Approved, or a question to answer (the page's CSP allows no evaluated strings: locators only).
    await page.locator('[data-testid=pipeline-status]:text-is("approved"), form[data-testid^=question-]').first().waitFor({ timeout: HANG_MS });
    if ((await page.textContent('[data-testid=pipeline-status]')) === 'approved') break;
    const value = await page.locator('form[data-testid^=question-]').first().getAttribute('data-testid').catch(() => null);
    if (!value) continue;
    const form = page.locator(`form[data-testid="${value}"]`);
    await form.locator('[data-testid=answer]').fill(answered === 0 ? 'Pictures and Misc only' : 'Skip the file and warn');
    await form.locator('button[type=submit]').click();
    // Gone from the page once the board says it was answered.
    await page.waitForSelector(`form[data-testid="${value}"]`, { state: 'detached', timeout: HANG_MS });
    answered++;
  }
  expect(answered).toBeGreaterThan(0);
}

/** The evidence on the pipeline's page: criteria with verdicts, checks with their code and output, the timeline. */
async function expectEvidence(page: Page): Promise<void> {
  await page.waitForSelector('[data-testid=criteria] li');
  expect(await page.locator('[data-testid=criteria] li').count()).toBeGreaterThan(0);
  expect(await page.locator('[data-testid=criteria]').textContent()).toMatch(/AC1.*met/);
  const check = page.locator('[data-testid^=check-CHK]').first();
  await check.locator('summary').click();
  expect(await check.textContent()).toMatch(/CHK1 python: passed exit 0 on [0-9a-f]{12}/);
  // The timeline follows the log, which may bring the approval a moment after the status shows it.
  await page.locator('[data-testid=timeline]', { hasText: /pipeline approved/ }).waitFor({ timeout: HANG_MS });
}

/** The refusals: no token, a wrong one, a foreign Host, and a change without this page's Origin and CSRF token. */
async function expectRefusals(page: Page, address: string): Promise<void> {
  const url = new URL(address);
  const token = url.searchParams.get('token')!;
  const origin = url.origin;
  expect((await fetch(`${origin}/api/state`)).status).toBe(401);
  expect((await fetch(`${origin}/?token=wrong-${token}`, { redirect: 'manual' })).status).toBe(401);
  const cookie = `autoteam_${url.port}=${token}`;
  expect((await fetch(`${origin}/api/state`, { headers: { cookie } })).status).toBe(200);
  // DNS rebinding: another name that resolves here is still not this server.
  const foreign = await new Promise<number>((resolve, reject) =>
    http.get({ host: '127.0.0.1', port: Number(url.port), path: '/api/state', headers: { host: `rebound.example:${url.port}`, cookie } }, (response) => resolve(response.statusCode!)).on('error', reject),
  );
  expect(foreign).toBe(403);
  const post = (headers: Record<string, string>) => fetch(`${origin}/api/requirements`, { method: 'POST', headers: { cookie, ...headers }, body: JSON.stringify({ text: 'forged requirement' }) });
  expect((await post({ origin: 'http://evil.example' })).status).toBe(403);
  expect((await post({ origin })).status).toBe(403); // no CSRF token
  // A page of another origin in the same browser (same site: the cookie goes along) posts to the board.
  const other = http.createServer((_request, response) => response.end('<html><body>another site</body></html>'));
  await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise((resolve) => other.close(resolve)));
  const otherPage = await page.context().newPage();
  await otherPage.goto(`http://127.0.0.1:${(other.address() as { port: number }).port}/`);
  await otherPage.evaluate(async (target) => {
    await fetch(`${target}/api/requirements`, { method: 'POST', credentials: 'include', body: JSON.stringify({ text: 'forged requirement' }) }).catch(() => undefined);
  }, origin);
  const state = (await (await fetch(`${origin}/api/tasks/1`, { headers: { cookie } })).json()) as { subject: string };
  expect(state.subject).not.toMatch(/forged/);
  const cards = await page.locator('[data-testid^=card-]').allTextContents();
  expect(cards.join('\n')).not.toMatch(/forged/);
  await otherPage.close();
}

describe.runIf(chromiumPath)('the web board in a browser', () => {
  it('beside the REPL (--web, file board): post, answer, approved, evidence, refusals', async () => {
    const dir = folder('autoteam-web-');
    const repl = start(['--dir', dir, '--web', '0'], dir, 'pipe');
    const address = await webAddress(repl);
    expect(address).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]{43}$/);
    const page = await (await (await launch()).newContext()).newPage();
    await page.goto(address);
    // The token left the address bar for an HttpOnly cookie.
    expect(page.url()).not.toContain('token=');
    expect(await page.textContent('[data-testid=leader]')).toBe('lead: this process');
    // A plan waiting for the lead is decided from the page.
    const board = fileBoard(dir);
    cleanups.push(() => board.close());
    await board.registry.join('planner', 'engineer', { status: 'waiting' });
    const plan = await board.requests.create({ kind: 'plan', from: 'planner', to: 'lead', plan: 'Write organize.py, then its tests.' });
    const card = page.locator(`[data-testid="plan-${plan.id}"]`);
    await card.waitFor({ timeout: HANG_MS });
    expect(await card.textContent()).toContain('Write organize.py, then its tests.');
    await card.locator('input').fill('Tests first, please.');
    await card.locator('button', { hasText: 'Reject' }).click();
    await card.waitFor({ state: 'detached', timeout: HANG_MS });
    expect(board.requests.list({ kind: 'plan' })[0]).toMatchObject({ id: plan.id, status: 'rejected' });
    expect(board.mailbox.peek('planner')).toEqual([expect.objectContaining({ type: 'plan_approval_response', content: 'Tests first, please.', approve: false })]);
    // A requirement over the size one may be is refused whole, with the size, never cut short by the page.
    await page.fill('[data-testid=requirement]', `Write a tool. ${'a'.repeat(120_000)}`);
    await page.click('[data-testid=post]');
    const refused = page.locator('[data-testid=post-line].bad');
    await refused.waitFor({ timeout: HANG_MS });
    expect(await refused.textContent()).toMatch(/^text: a requirement is at most 100 KB \(this one is 118 KB\): put the details in a file/);
    expect(board.tasks.list()).toEqual([]);
    const pipeline = await postAndFollow(page);
    await expectEvidence(page);
    if (process.env.AUTOTEAM_SCREENSHOTS) {
      await page.locator('[data-testid=pipeline] h2').first().scrollIntoViewIfNeeded();
      await page.screenshot({ path: path.join(process.env.AUTOTEAM_SCREENSHOTS, 'web-pipeline.png') });
    }
    // Back on the board: every card of the pipeline is completed.
    await page.goto(`${new URL(address).origin}/#/`);
    await page.fill('[data-testid=filter-pipeline]', String(pipeline));
    await expect.poll(() => page.locator('[data-testid=column-completed] [data-testid^=card-]').count(), { timeout: HANG_MS }).toBeGreaterThanOrEqual(3);
    expect(await page.locator('[data-testid=column-pending] [data-testid^=card-]').count()).toBe(0);
    // A card's subject opens its task: the file's description, result and history.
    const first = board.tasks.list().find((task) => task.pipeline === pipeline)!;
    await page.locator(`[data-testid=card-${first.id}] a.subject`).click();
    await page.locator('[data-testid=task-history] li').first().waitFor({ timeout: HANG_MS });
    expect(page.url()).toMatch(new RegExp(`#/task/${first.id}$`));
    expect(await page.textContent('[data-testid=task-status]')).toBe('completed');
    expect(await page.textContent('[data-testid=task-subject]')).toBe(first.subject);
    expect(await page.textContent('[data-testid=task-description]')).toBe(first.description);
    expect(await page.locator('[data-testid=task-history] li').count()).toBe(fileBoard(dir).tasks.get(first.id)!.history.length);
    await page.goto(`${new URL(address).origin}/#/task/999`);
    await page.locator('p.bad', { hasText: 'no task #999' }).waitFor({ timeout: HANG_MS });
    await page.goto(`${new URL(address).origin}/#/`);
    await page.fill('[data-testid=filter-pipeline]', String(pipeline));
    // Narrow, a card's top row (id, stage, age) wraps inside the card rather than running out of it.
    await page.setViewportSize({ width: 640, height: 800 });
    // (A string: the tests compile without the DOM's types.)
    const outside = await page.evaluate(`[...document.querySelectorAll('[data-testid^=card-]')].flatMap((card) => {
      const box = card.getBoundingClientRect();
      return [...card.querySelectorAll('.card-top > *')].filter((part) => part.getBoundingClientRect().right > box.right + 0.5).map((part) => card.getAttribute('data-testid') + ': ' + part.textContent);
    })`);
    expect(outside).toEqual([]);
    // As wide as a phone: every column is on the screen, one under another, none past its right edge.
    await page.setViewportSize({ width: 390, height: 800 });
    const offScreen = await page.evaluate(`[...document.querySelectorAll('[data-testid^=column-]')].filter((column) => column.getBoundingClientRect().right > window.innerWidth + 0.5).map((column) => column.getAttribute('data-testid'))`);
    expect(offScreen).toEqual([]);
    await page.setViewportSize({ width: 1400, height: 800 });
    // The team page: a row per member with its model, how to get a real one said once, below the table.
    await page.goto(`${new URL(address).origin}/#/team`);
    const analyst = page.locator('[data-testid=member-analyst] td');
    await analyst.first().waitFor({ timeout: HANG_MS });
    expect((await analyst.allTextContents()).slice(0, 3)).toEqual(['analyst', 'analyst', 'offline scripted model']);
    expect(await page.locator('p.muted', { hasText: 'In all:' }).textContent()).toMatch(/Models: offline scripted model — set ANTHROPIC_API_KEY or OPENAI_API_KEY for a real model\.$/);
    await expectRefusals(page, address);
    // The REPL saw the person's answers as answered, not as questions still waiting.
    const before = repl.lines.length;
    repl.write('/inbox');
    await repl.waitFor(() => (repl.lines.slice(before).some((line) => /^Inbox/.test(line)) ? true : undefined), "the REPL's /inbox");
    expect(repl.lines.slice(before).join('\n')).not.toMatch(/asks:/);
  });

  it('beside a headless run (run --web): the page answers its questions and follows it to approved, then says the run ended', async () => {
    const dir = folder('autoteam-web-run-');
    // Not --auto, and standard input left open: the run waits for the analyst's answers, which come
    // from the page, so it cannot end before the page is there to see it.
    const run = start(['run', '--web', '0', '--dir', dir, DOWNLOADS_REQUIREMENT], dir, 'pipe');
    const address = await webAddress(run);
    const page = await (await (await launch()).newContext()).newPage();
    await page.goto(address);
    await follow(page, 1);
    const ended = page.locator('[data-testid=ended]');
    await ended.waitFor({ timeout: HANG_MS });
    expect(await ended.textContent()).toMatch(/^the run ended: autoteam web has stopped/);
    expect(await run.exited).toEqual({ code: 0, signal: null });
  });

  it('run --web on a port that is taken: refused before any teammate starts, nothing left on the board', async () => {
    const dir = folder('autoteam-web-busy-');
    const taken = http.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as import('node:net').AddressInfo).port;
    try {
      const run = await runCli(['run', '--auto', '--web', String(port), '--dir', dir, DOWNLOADS_REQUIREMENT], { cwd: dir });
      expect(run.code, describeRun(run)).toBe(2);
      expect(run.stderr.trim().split('\n').at(-1)).toBe(`autoteam: web board: cannot listen on 127.0.0.1:${port}: the port is in use (--web 0 picks a free one)`);
      expect(`${run.stdout}${run.stderr}`).not.toMatch(/teammate|posted/);
      const log = path.join(dir, '.team', 'events.jsonl');
      expect(fs.existsSync(log) ? fs.readFileSync(log, 'utf8') : '').not.toMatch(/"type":"(teammate_spawned|task_posted)"/);
      expect(fileBoard(dir).tasks.list()).toEqual([]);
    } finally {
      await new Promise<void>((resolve) => taken.close(() => resolve()));
    }
  });

  it('on a repository: a merged pipeline offers no merge, an approved one does, and moving to an unknown pipeline shows none', { timeout: 360_000 }, async () => {
    const repo = folder('autoteam-web-repo-');
    git(repo, 'init', '-q', '-b', 'main');
    fs.writeFileSync(path.join(repo, 'README.md'), '# A project\n');
    git(repo, 'add', 'README.md');
    git(repo, 'commit', '-q', '-m', 'Initial commit');
    for (const requirement of [DOWNLOADS_REQUIREMENT, 'Write a Python script that counts the words in a text file.']) {
      const run = await runCli(['run', '--auto', requirement], { cwd: repo });
      expect(run.code, describeRun(run)).toBe(0);
      if (requirement === DOWNLOADS_REQUIREMENT) expect((await runCli(['merge', '--queue'], { cwd: repo })).code).toBe(0);
    }
    const merged = git(repo, 'rev-parse', 'HEAD');
    const web = start(['web', '--port', '0'], repo);
    const address = await webAddress(web);
    const url = new URL(address);
    const state = (await (await fetch(`${url.origin}/api/state`, { headers: { cookie: `autoteam_${url.port}=${url.searchParams.get('token')}` } })).json()) as { board: { repository: string | null } };
    expect(state.board.repository).toBe(fs.realpathSync(repo));
    const page = await (await (await launch()).newContext()).newPage();
    await page.goto(address);
    await page.goto(`${url.origin}/#/pipeline/1`);
    await page.locator('[data-testid=branch]', { hasText: `merged into main at ${merged.slice(0, 12)}` }).waitFor({ timeout: HANG_MS });
    expect(await page.locator('.buttons button').allTextContents()).toEqual([]);
    expect(await page.locator('[data-testid=diff]').count()).toBe(0);

    // In-page moves: to the approved, unmerged pipeline, then to one that does not exist.
    await page.evaluate(() => ((globalThis as unknown as { location: { hash: string } }).location.hash = '#/pipeline/2'));
    await page.locator('[data-testid=branch]', { hasText: /^branch autoteam\/2-\S+ from [0-9a-f]{12} · commit [0-9a-f]{12}$/ }).waitFor({ timeout: HANG_MS });
    expect(await page.locator('.buttons button').allTextContents()).toEqual(['Merge', 'Discard branch']);
    await page.locator('[data-testid=diff]').waitFor({ timeout: HANG_MS });
    await page.evaluate(() => ((globalThis as unknown as { location: { hash: string } }).location.hash = '#/pipeline/77'));
    await page.locator('p.bad', { hasText: 'no pipeline #77' }).waitFor({ timeout: HANG_MS });
    expect(await page.locator('[data-testid=pipeline]').count()).toBe(0);
    expect(await page.locator('.buttons button').count()).toBe(0);
  });

  it.runIf(findPostgresBin())('autoteam web on its own (PostgreSQL), beside a lead in another process; an outage shown and cleared', { timeout: 360_000 }, async () => {
    const server = await startPostgres();
    cleanups.push(() => server.stop());
    const leadDir = folder('autoteam-web-lead-');
    const webDir = folder('autoteam-web-view-');
    const lead = start(['--board', server.url, '--dir', leadDir], leadDir, 'pipe');
    await lead.waitFor(() => (lead.lines.some((line) => line.startsWith('Type /help')) ? true : undefined), 'the lead to start its team');
    expect(lead.lines).toContain('started analyst (analyst), engineer (engineer), reviewer (reviewer)');
    const web = start(['web', '--board', server.url, '--dir', webDir, '--port', '0'], webDir);
    const address = await webAddress(web);
    expect(web.lines[0]).toBe(`autoteam web: ${address}`);
    const page = await (await (await launch()).newContext()).newPage();
    await page.goto(address);
    await page.locator('[data-testid=leader]', { hasText: /^lead: pid \d+ on / }).waitFor({ timeout: HANG_MS });
    await postAndFollow(page);
    await expectEvidence(page);
    await expectRefusals(page, address);

    server.pause();
    const banner = await page.waitForSelector('[data-testid=outage]', { timeout: HANG_MS });
    expect(await banner.textContent()).toMatch(/The board is unreachable since \d/);
    server.resume();
    await page.waitForSelector('[data-testid=outage]', { state: 'detached', timeout: HANG_MS });
    // Served throughout: the page still reads the pipeline.
    expect(await page.textContent('[data-testid=pipeline-status]')).toBe('approved');
  });
});

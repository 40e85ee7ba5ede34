/**
 * The runtime on the PostgreSQL board, against a real server started by the test setup: a headless
 * run, and a lead with a teammate in another process that has its own folder (as on another
 * machine) — the files travel through the board. Build first: `npx tsc -p tsconfig.build.json`.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openBoard } from '../../src/core/board/board.js';
import { LeadSession } from '../../src/core/lead/session.js';
import { type CliResult, cleanEnv, cliEntry, DOWNLOADS_REQUIREMENT, describeRun, runCli, sha256, tempBoard } from '../helpers/pipeline-cli.js';
import { freshDatabase, postgresBin, usePostgres } from '../helpers/postgres.js';
import { CliChild } from '../helpers/cli-child.js';
import { HANG_MS, until } from '../helpers/agent-wait.js';
import { HEARTBEAT_MS, STALE_AFTER } from '../../src/core/board/liveness.js';

usePostgres();
const python = spawnSync('python3', ['--version']).status === 0;
const dirs: string[] = [];
const children: ChildProcess[] = [];
afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

function folder(prefix: string): string {
  const dir = tempBoard(prefix);
  dirs.push(dir);
  return dir;
}

// One run on a database board serves both what it leaves there and what export and import make of it.
describe.runIf(postgresBin && python)('a run on the PostgreSQL board', () => {
  let url = '';
  let dir = '';
  let run: CliResult;
  beforeAll(async () => {
    url = await freshDatabase();
    dir = folder('autoteam-pgrun-');
    run = await runCli(['run', '--auto', '--board', url, '--dir', dir, DOWNLOADS_REQUIREMENT], { cwd: dir });
  });

  it('`autoteam run --board postgres://…` takes a requirement to approval with the tasks in the database, not in files', async () => {
    expect(run.code, describeRun(run)).toBe(0);
    expect(run.stdout).toMatch(/pipeline #1: APPROVED/);
    expect(fs.existsSync(path.join(dir, '.tasks'))).toBe(false);
    expect(fs.existsSync(path.join(dir, 'workspace', '1', 'organize.py'))).toBe(true);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const { rows } = await client.query<{ id: number; stage: string; status: string; owner: string }>('SELECT id, stage, status, owner FROM autoteam_tasks ORDER BY id');
    await client.end();
    expect(rows.map((row) => [row.stage, row.status, row.owner])).toEqual([
      ['requirements', 'completed', 'analyst'],
      ['implementation', 'completed', 'engineer'],
      ['review', 'completed', 'reviewer'],
      ['implementation', 'completed', 'engineer'],
      ['review', 'completed', 'reviewer'],
    ]);
    const listed = await runCli(['tasks', '--board', url], { cwd: dir });
    expect(listed.stdout).toMatch(/^pipeline #1 approved · 15 model calls/m);
    const shown = await runCli(['show', '5', '--board', url], { cwd: dir });
    expect(JSON.parse(shown.stdout)).toMatchObject({ id: 5, stage: 'review', artifacts: { verdict: 'approved' } });
  });

  it('a database board exports to the same files, and those files import into an empty database, ids kept', async () => {
    expect(run.code, describeRun(run)).toBe(0);
    const out = folder('autoteam-pgout-');
    const exported = await runCli(['export', '--board', url, '--dir', out], { cwd: out });
    expect(exported.code, describeRun(exported)).toBe(0);
    expect(exported.stdout).toMatch(/^exported 5 tasks, \d+ requests?, \d+ messages?, \d+ events? and 2 submitted files from postgres:\/\//);
    // The log goes along, in its order, numbered from 1 in the folder.
    const eventsDb = await runCli(['events', '--json', '--board', url], { cwd: out });
    const eventsFiles = await runCli(['events', '--json', '--dir', out], { cwd: out });
    const strip = (text: string) => text.trim().split('\n').map((line) => ({ ...JSON.parse(line), seq: 0 }));
    expect(strip(eventsFiles.stdout).length).toBeGreaterThan(20);
    expect(strip(eventsFiles.stdout)).toEqual(strip(eventsDb.stdout));
    expect(exported.stdout).toContain(` ${strip(eventsDb.stdout).length} events `);
    const listedFiles = await runCli(['tasks', '--dir', out], { cwd: out });
    const listedDb = await runCli(['tasks', '--board', url], { cwd: out });
    expect(listedFiles.stdout).toBe(listedDb.stdout);
    expect(listedFiles.stderr).toBe('');
    const again = await runCli(['export', '--board', url, '--dir', out], { cwd: out });
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/export writes into an empty folder; .* \(a board\)/);

    const target = await freshDatabase();
    const imported = await runCli(['import', '--dir', out, '--board', target], { cwd: out });
    expect(imported.code, describeRun(imported)).toBe(0);
    expect(imported.stdout).toMatch(/^imported 5 tasks, \d+ requests?, \d+ messages?, \d+ events? and 2 submitted files/);
    const listedImport = await runCli(['tasks', '--board', target], { cwd: out });
    expect(listedImport.stdout).toBe(listedDb.stdout);
    // Reading a database's board leaves the folder it is read from as it was (no empty .team/inbox).
    const bystander = folder('autoteam-pgread-');
    for (const args of [['tasks', '--board', url], ['events', '--board', url]]) expect((await runCli(args, { cwd: bystander })).code).toBe(0);
    expect(fs.readdirSync(bystander)).toEqual([]);
    const eventsImported = await runCli(['events', '--json', '--board', target], { cwd: out });
    expect(strip(eventsImported.stdout)).toEqual(strip(eventsDb.stdout));
    // A new task continues after the imported ids, and a new pipeline after the imported ones.
    const next = await openBoard(target, out);
    try {
      expect((await next.tasks.create({ subject: 'after import' })).id).toBe(6);
      expect(await next.tasks.nextPipelineId()).toBe(2);
    } finally {
      await next.close();
    }
    const twice = await runCli(['import', '--dir', out, '--board', target], { cwd: out });
    expect(twice.code).toBe(2);
    expect(twice.stderr).toMatch(/the board at postgres:\/\/.* already has tasks: import into an empty one/);
  });
});

describe.runIf(postgresBin && python)('the PostgreSQL board', () => {
  it('a teammate in another process with its own folder works the engineer stage; the reviewer gets its files through the board', async () => {
    const url = await freshDatabase();
    const leadDir = folder('autoteam-pglead-');
    const workerDir = folder('autoteam-pgworker-');
    const board = await openBoard(url, leadDir);
    const session = new LeadSession({ rootDir: leadDir, board, model: { kind: 'offline', reason: 'test' }, auto: true, settings: { pollMs: 200 } });
    const worker = spawn(process.execPath, [cliEntry, 'worker', '--board', url, '--dir', workerDir, '--name', 'e2', '--role', 'engineer'], {
      cwd: workerDir,
      env: cleanEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(worker);
    let output = '';
    worker.stdout!.setEncoding('utf8').on('data', (text: string) => (output += text));
    worker.stderr!.setEncoding('utf8').on('data', (text: string) => (output += text));
    try {
      await session.start([
        { name: 'analyst', role: 'analyst' },
        { name: 'reviewer', role: 'reviewer' },
      ]);
      const since = new Date().toISOString();
      const task = await session.post(DOWNLOADS_REQUIREMENT);
      const state = await session.waitForPipeline(task.pipeline!, AbortSignal.timeout(HANG_MS));
      expect(state.status, output).toBe('approved');
      expect(state.tasks.filter((t) => t.stage === 'implementation').map((t) => t.owner)).toEqual(['e2', 'e2']);
      // The worker's calls are in its own folder's trace, not the lead's: the summary takes them from the board's log.
      const work = await session.workSummary(new Set(state.tasks.map((t) => t.id)), since);
      expect(work.roles.find((role) => role.role === 'engineer')).toMatchObject({ agents: ['e2'], tools: expect.objectContaining({ submit_for_review: 2 }) });
      expect({ calls: work.modelCalls, inputTokens: work.inputTokens, outputTokens: work.outputTokens }).toEqual(state.usage);
      expect(state.tasks.filter((t) => t.stage === 'review').map((t) => t.owner)).toEqual(['reviewer', 'reviewer']);
      const written = path.join(workerDir, 'workspace', '1', 'organize.py');
      const reviewed = path.join(leadDir, 'workspace', '1', 'organize.py');
      expect(sha256(reviewed)).toBe(sha256(written));
      expect(state.tasks.at(-1)!.artifacts.submitted?.sha256).toBe(sha256(written));
      expect(session.snapshot().team.members.find((member) => member.name === 'e2')).toMatchObject({ role: 'engineer' });
      // One LISTEN per process, the lead's and the worker's: the lead's two teammate threads follow its board.
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      const listens = await client.query<{ n: string }>("SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND query = 'LISTEN autoteam'");
      await client.end();
      expect(session.snapshot().team.members.filter((member) => member.status !== 'shutdown' && member.status !== 'dead')).toHaveLength(3);
      expect(Number(listens.rows[0]!.n)).toBe(2);
    } finally {
      await session.close(3_000);
      await board.close();
      const exited = new Promise<number | null>((resolve) => worker.once('exit', (code) => resolve(code)));
      worker.kill('SIGTERM');
      expect(await exited).toBe(0);
    }
    expect(output).toMatch(/\[e2\] engineer on offline scripted model.*, board postgres:\/\/postgres@127\.0\.0\.1:\d+\/board_/);
  });

  it('a board it cannot reach is one line naming it, password hidden, exit 1', async () => {
    const dir = folder('autoteam-pgbad-');
    const result = await runCli(['tasks', '--board', 'postgres://me:s3cret-pass@127.0.0.1:1/nothing'], { cwd: dir });
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toMatch(/^autoteam: cannot use the board at postgres:\/\/me:\*\*\*@127\.0\.0\.1:1\/nothing: .*ECONNREFUSED/);
    expect(result.stderr).not.toContain('s3cret-pass');
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    const bad = await runCli(['tasks', '--board', 'http://example.com'], { cwd: dir });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--board takes a postgres:\/\/ URL/);
  });

  it('a port that takes the connection and never answers is said after one connection timeout, not after four', { timeout: 120_000 }, async () => {
    const dir = folder('autoteam-pgsilent-');
    const accepted: net.Socket[] = [];
    const silent = net.createServer((socket) => void accepted.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = silent.address() as net.AddressInfo;
      const result = await runCli(['tasks', '--board', `postgres://me@127.0.0.1:${port}/nothing`], { cwd: dir });
      expect(result.code, describeRun(result)).toBe(1);
      expect(result.stderr.trim()).toBe(`autoteam: cannot use the board at postgres://me@127.0.0.1:${port}/nothing: Connection terminated due to connection timeout (nothing answered within 10 s: is a PostgreSQL server listening there?)`);
      // One connection, given up after the pool's 10 s: the retries are for a server restarting, which refuses or says so.
      expect(accepted).toHaveLength(1);
    } finally {
      for (const socket of accepted) socket.destroy();
      silent.close();
    }
  });
});

describe.runIf(postgresBin && python)('mistakes and outages', () => {
  it('bad --board values, --dir with a URL, a password in the query, and a database that holds no board', async () => {
    const dir = folder('autoteam-pgmist-');
    const cases: Array<[string[], Record<string, string>, number, RegExp]> = [
      [['tasks', '--board', 'postgres://'], {}, 2, /--board: 'postgres:\/\/.*': it names no host/],
      [['tasks', '--board', ''], {}, 2, /--board needs a postgres:\/\/ URL/],
      [['tasks'], { AUTOTEAM_BOARD: 'http://x' }, 2, /AUTOTEAM_BOARD takes a postgres:\/\/ URL, got 'http:\/\/x\/?' \(unset it for a board in a folder \(--dir <folder>\)\)/],
      [['worker', '--dir', 'postgres://u@h/db', '--name', 'e', '--role', 'engineer'], {}, 2, /--dir takes a folder; for a board in PostgreSQL use --board/],
      [['tasks', '--board', 'postgres://alice@127.0.0.1:1/db?password=S3cretPw'], {}, 1, /cannot use the board at postgres:\/\/alice@127\.0\.0\.1:1\/db\?password=\*\*\*: /],
      [['tasks', '--board', '/no/such/folder'], {}, 2, /^autoteam: --board takes a postgres:\/\/ URL, got '\/no\/such\/folder' \(for a board in a folder, use --dir <folder>\)$/],
      [['tasks', '--board', 'postgres://bob:S3cretPw@127.0.0.1:notaport/team'], {}, 2, /^autoteam: --board: 'postgres:\/\/bob:\*\*\*@127\.0\.0\.1:notaport\/team': its port is not a number/],
      [['tasks', '--board', 'postgres://127.0.0.1:99999/team'], {}, 2, /its port 99999 is out of range/],
      [['tasks', '--board', 'postgres://127.0.0.1:0/team'], {}, 2, /its port 0 is out of range/],
      // No host (a Unix socket written the libpq way) or no `@`: the password is still never shown.
      [['tasks', '--board', 'postgres://u:S3cretPw@/db?host=/tmp/sock'], {}, 2, /^autoteam: --board: 'postgres:\/\/u:\*\*\*@\/db\?host=\/tmp\/sock': it names no host .*for a Unix socket, postgres:\/\/user@localhost\/database\?host=/],
      [['tasks', '--board', 'postgres://u:S3cretPw'], {}, 2, /^autoteam: --board: 'postgres:\/\/u:\*\*\*': its port is not a number/],
    ];
    for (const [args, env, code, message] of cases) {
      const result = await runCli(args, { cwd: dir, env });
      expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(code);
      expect(result.stderr.trim()).toMatch(message);
      expect(result.stderr).not.toContain('S3cretPw');
    }
    const empty = await freshDatabase();
    const read = await runCli(['tasks', '--board', empty], { cwd: dir });
    expect(read.code).toBe(2);
    // A worker named as the lead will be is refused before it makes a board there, or anything here.
    const named = folder('autoteam-pgname-');
    const lead = await runCli(['worker', '--role', 'engineer', '--name', 'Lead', '--board', empty], { cwd: named });
    expect(lead.code).toBe(2);
    expect(lead.stderr.trim()).toBe("autoteam: 'Lead' differs from the team lead's name 'lead' only in case; names must differ in more than case; choose another name");
    expect(fs.readdirSync(named)).toEqual([]);
    expect(read.stderr).toMatch(/there is no autoteam board in postgres:\/\/.*\/board_\d+_\d+ \(a lead or a worker creates one/);
    const client = new pg.Client({ connectionString: empty });
    await client.connect();
    const { rows } = await client.query("SELECT count(*)::int AS n FROM information_schema.tables WHERE table_name LIKE 'autoteam_%'");
    await client.end();
    expect(rows[0].n).toBe(0);
    const missing = await runCli(['tasks', '--board', empty.replace(/\/[^/]+$/, '/nosuchdb')], { cwd: dir });
    expect(missing.code).toBe(2);
    expect(missing.stderr.trim()).toMatch(/^autoteam: cannot use the board at postgres:\/\/.*\/nosuchdb: database "nosuchdb" does not exist/);
  });

  it('events --follow says when its database goes away and when it answers again, and misses no event', { timeout: 120_000 }, async () => {
    const { startPostgres } = await import('../../src/bench/postgres-server.js');
    const server = await startPostgres();
    const dir = folder('autoteam-pgfollow-out-');
    const follower = CliChild.start(['events', '--follow', '--json', '--board', server.url, '--dir', dir], { cwd: dir });
    try {
      const post = async (subject: string) => {
        const board = await openBoard(server.url, dir);
        try {
          await board.tasks.create({ subject, role: 'engineer', by: 'lead' });
          await board.sink.flush();
        } finally {
          await board.close();
        }
      };
      const posted = (subject: string) => follower.waitForLine((line) => line.includes(`"subject":"${subject}"`), `the follower to print the post of '${subject}'`);
      await post('before the outage');
      await posted('before the outage');
      server.pause();
      await follower.waitFor(() => (/cannot use the board at postgres:\/\/.*; following on when it answers/.test(follower.stderr) ? true : undefined), 'the follower to say the database went away');
      server.resume();
      await follower.waitFor(() => (/the board answers again \(unreachable for about \d+ s/.test(follower.stderr) ? true : undefined), 'the follower to say it answers again');
      await post('after the outage');
      await posted('after the outage');
      // Said once each: the repeats are counted, not printed.
      expect(follower.stderr.match(/following on when it answers/g), follower.stderr).toHaveLength(1);
      expect(follower.lines.filter((line) => line.includes('"task_posted"'))).toHaveLength(2);
    } finally {
      const exit = await follower.stop('SIGTERM');
      server.stop();
      expect(exit, follower.describe()).toEqual({ code: 0, signal: null });
    }
  });

  // A pipeline plus the outage (18 s): more than a pipeline's 180 s on a slow machine.
  it('a run whose database goes away for longer than the heartbeat limit waits for it, declares nobody dead, and finishes', { timeout: 300_000 }, async () => {
    const { startPostgres } = await import('../../src/bench/postgres-server.js');
    const server = await startPostgres();
    try {
      const url = server.url;
      const dir = folder('autoteam-pgout-');
      const child = spawn(process.execPath, [cliEntry, 'run', '--auto', '--board', url, '--dir', dir, DOWNLOADS_REQUIREMENT], { cwd: dir, env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
      children.push(child);
      let output = '';
      child.stdout!.setEncoding('utf8').on('data', (text: string) => (output += text));
      child.stderr!.setEncoding('utf8').on('data', (text: string) => (output += text));
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      await until(() => /posted pipeline #1/.test(output), 'the run to post its pipeline').catch((error: Error) => {
        throw new Error(`${error.message}\n${output}`);
      });
      server.pause();
      // The outage itself is the scenario, not a wait for something: it must outlast STALE_AFTER
      // heartbeats, the silence after which a member counts as dead. Nobody could beat meanwhile, so
      // nobody may be declared dead for it.
      const outageMs = STALE_AFTER * HEARTBEAT_MS + 3_000;
      await new Promise((resolve) => setTimeout(resolve, outageMs));
      server.resume();
      const code = await exited;
      expect(code, output).toBe(0);
      expect(output).toMatch(/pipeline #1: APPROVED/);
      expect(output, output).not.toMatch(/is dead/);
      // Each source's first "cannot use the board" is shown; the repeats are counted in one notice.
      const unreachable = output.split('\n').filter((line) => /cannot use the board|ECONNREFUSED/.test(line));
      // Each names its source: a teammate (`[engineer] error …`) or one of the lead's own (`error BOARD_UNREACHABLE: watcher: …`),
      // and each is the board's one line (the URL, the driver's words after it), never the driver's error alone.
      const sources = unreachable.map((line) => /^\s*\[(\w+)\] error BOARD_UNREACHABLE: cannot use the board at /.exec(line)?.[1] ?? /^\s*error BOARD_UNREACHABLE: ([a-z ]+): cannot use the board at /.exec(line)?.[1]);
      expect(sources, output).not.toContain(undefined);
      expect(unreachable.length, output).toBe(new Set(sources).size);
      // Said once: the lead's notice is its board_outage event, not a line of its own beside it.
      expect(output.match(/the board answers again \(unreachable for about \d+ s/g), output).toHaveLength(1);
    } finally {
      server.stop();
    }
  });
});

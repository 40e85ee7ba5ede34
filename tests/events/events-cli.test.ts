/**
 * `autoteam events` through the real built CLI, on the file board and on PostgreSQL: tasks posted,
 * claimed and completed through the library leave their events on the board's log, and the command
 * prints that log in order (text with a seq column, or `--json` lines that validate as TeamEvents),
 * filtered by `--pipeline` and `--since` (a seq or how long ago); a bad `--since` is one line and
 * exit 2. `--follow` in a child process prints what another process appends after it started, in
 * order, and stops on SIGTERM with exit 0. Before there is a board (a folder without one, a database
 * without autoteam's tables) it says so and exits 0; `--follow` waits for one. Build first: `npm run build`.
 */
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Board, openBoard } from '../../src/core/board/board.js';
import { describeUrl } from '../../src/core/board/pg/url.js';
import { type TeamEvent, TeamEventSchema } from '../../src/core/events/schema.js';
import { CliChild } from '../helpers/cli-child.js';
import { describeRun, runCli, tempBoard } from '../helpers/pipeline-cli.js';
import { freshDatabase, postgresBin, usePostgres } from '../helpers/postgres.js';

usePostgres();

const dirs: string[] = [];
const boards: Board[] = [];
afterAll(async () => {
  for (const board of boards.splice(0)) await board.close();
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

const backends = [
  { name: 'file board', location: async (root: string) => root },
  ...(postgresBin ? [{ name: 'postgres board', location: async () => freshDatabase() }] : []),
];

/** Posts, claims and completes tasks as the runtime does, through the board's rules (which emit the events). */
async function work(board: Board, pipeline: number | null, finish: boolean): Promise<number> {
  const task = await board.tasks.create({ subject: `Work for ${pipeline === null ? 'no pipeline' : `pipeline ${pipeline}`}`, role: 'engineer', pipeline, by: 'lead' });
  const claimed = await board.tasks.claim(task.id, 'eng', { role: 'engineer' });
  if (!claimed.ok) throw new Error(`claim of #${task.id} refused: ${claimed.reason}`);
  if (finish) {
    const done = await board.tasks.complete(task.id, { owner: 'eng', token: claimed.task.claims }, 'done');
    if (!done.ok) throw new Error(`completion of #${task.id} refused: ${done.reason}`);
  }
  await board.sink.flush();
  return task.id;
}

function parseJsonLines(stdout: string): TeamEvent[] {
  return stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => TeamEventSchema.parse(JSON.parse(line)));
}

describe.each(backends)('autoteam events on the $name', (backend) => {
  let root = '';
  let board: Board;
  let flags: string[] = [];
  let logged: TeamEvent[] = [];
  const TWO_HOURS_AGO = new Date(Date.now() - 2 * 3_600_000).toISOString();
  const events = (args: string[]) => runCli(['events', ...flags, ...args], { cwd: root });

  beforeAll(async () => {
    root = tempBoard('autoteam-events-cli-');
    dirs.push(root);
    const location = await backend.location(root);
    flags = location === root ? ['--dir', root] : ['--board', location, '--dir', root];
    board = await openBoard(location, root);
    boards.push(board);
    // An event from two hours ago, for --since 10m; then work in two pipelines and a general task.
    await board.log.append([{ type: 'note', ts: TWO_HOURS_AGO, team: 'evt', text: 'an old remark' }]);
    await work(board, 1, true);
    await work(board, 2, false);
    await work(board, null, true);
    await work(board, 1, true);
    logged = await board.log.read();
  }, 120_000);

  it('has the library’s work on the log: posted, claimed, completed', () => {
    expect(logged.map((event) => event.type)).toEqual([
      'note',
      ...['task_posted', 'task_claimed', 'task_completed'],
      ...['task_posted', 'task_claimed'],
      ...['task_posted', 'task_claimed', 'task_completed'],
      ...['task_posted', 'task_claimed', 'task_completed'],
    ]);
    expect(logged.map((event) => event.seq)).toEqual(logged.map((_, i) => i + 1));
  });

  it('prints the log in order, one line per event, led by its seq', async () => {
    const run = await events([]);
    expect(run.code, describeRun(run)).toBe(0);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(logged.length);
    for (const [i, line] of lines.entries()) {
      const event = logged[i]!;
      expect(line).toMatch(/^ *\d+ \d\d:\d\d:\d\d( p\d+)? \S/);
      expect(Number(line.trim().split(' ')[0])).toBe(event.seq);
      expect(line.includes(` p${event.pipeline} `), line).toBe(Boolean(event.pipeline));
    }
    expect(lines[0]).toContain(TWO_HOURS_AGO.slice(11, 19));
  });

  it('--json prints one event a line, each a valid TeamEvent, the log exactly', async () => {
    const run = await events(['--json']);
    expect(run.code, describeRun(run)).toBe(0);
    expect(parseJsonLines(run.stdout)).toEqual(logged);
  });

  it('--pipeline N prints only that pipeline’s events; a pipeline that is not a number is refused', async () => {
    for (const pipeline of [1, 2]) {
      const run = await events(['--json', '--pipeline', String(pipeline)]);
      expect(run.code, describeRun(run)).toBe(0);
      const printed = parseJsonLines(run.stdout);
      expect(printed.length).toBeGreaterThan(0);
      expect(printed).toEqual(logged.filter((event) => event.pipeline === pipeline));
    }
    // A pipeline the board has never had is refused as `diff` and `merge` refuse it; one with no
    // event since a time is not.
    const missing = await events(['--pipeline', '99']);
    expect(missing.code, describeRun(missing)).toBe(2);
    expect(missing.stderr.trim()).toBe('autoteam: there is no pipeline #99');
    const quiet = await events(['--pipeline', '1', '--since', String(logged.at(-1)!.seq)]);
    expect(quiet.code, describeRun(quiet)).toBe(0);
    expect(quiet.stderr.trim()).toBe('no events match');
    const bad = await events(['--pipeline', 'first']);
    expect(bad.code, describeRun(bad)).toBe(2);
    expect(bad.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^autoteam: --pipeline: 'first' is not a pipeline number/)]);
  });

  it('--since <seq> prints what came after it, --since 10m or a time what came since then', async () => {
    const after = logged[4]!.seq!;
    const bySeq = await events(['--json', '--since', String(after)]);
    expect(bySeq.code, describeRun(bySeq)).toBe(0);
    expect(parseJsonLines(bySeq.stdout)).toEqual(logged.filter((event) => event.seq! > after));

    const recent = await events(['--json', '--since', '10m']);
    expect(recent.code, describeRun(recent)).toBe(0);
    expect(parseJsonLines(recent.stdout)).toEqual(logged.slice(1));

    const afterOld = new Date(Date.parse(TWO_HOURS_AGO) + 1_000).toISOString();
    const byTime = await events(['--json', '--since', afterOld]);
    expect(byTime.code, describeRun(byTime)).toBe(0);
    expect(parseJsonLines(byTime.stdout)).toEqual(logged.slice(1));

    const beyond = await events(['--since', String(logged.at(-1)!.seq)]);
    expect(beyond.code, describeRun(beyond)).toBe(0);
    expect(beyond.stdout).toBe('');
    expect(beyond.stderr.trim()).toBe('no events match');
  });

  it('a --since that is neither a seq, a time nor a duration is one line and exit 2', async () => {
    const run = await events(['--since', 'yesterday']);
    expect(run.code, describeRun(run)).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr.trim().split('\n')).toEqual([
      "autoteam: --since: 'yesterday' is not an event number, a time (2026-12-01T10:00:00Z) or how long ago (10m, 2h)",
    ]);
  });

  it('--follow prints events another process appends after it started, in order, and stops on SIGTERM with exit 0', async () => {
    const follower = CliChild.start(['events', '--follow', '--json', ...flags], { cwd: root });
    try {
      const last = logged.at(-1)!.seq!;
      // Everything already on the log is printed first: from then on the follower is following.
      await follower.waitForLine((line) => (JSON.parse(line) as TeamEvent).seq === last, `the follower to print seq ${last}`);
      const posted = await work(board, 3, false);
      const seen = await follower.waitFor(() => {
        const printed = follower.lines.filter(Boolean).map((line) => TeamEventSchema.parse(JSON.parse(line)));
        return printed.some((event) => event.type === 'task_claimed' && event.task === posted) ? printed : undefined;
      }, `the follower to print the claim of #${posted}`);
      expect(seen.slice(0, logged.length)).toEqual(logged);
      const fresh = seen.slice(logged.length);
      expect(fresh.map((event) => [event.type, event.task, event.pipeline])).toEqual([
        ['task_posted', posted, 3],
        ['task_claimed', posted, 3],
      ]);
      expect(fresh.map((event) => event.seq)).toEqual([last + 1, last + 2]);
      expect(fresh).toEqual(await board.log.read({ since: last }));
    } finally {
      const exit = await follower.stop('SIGTERM');
      expect(exit, follower.describe()).toEqual({ code: 0, signal: null });
    }
    expect(follower.stderr).toBe('');
  }, 180_000);

  it('--follow --pipeline of a pipeline not posted yet says so once, and waits for it', async () => {
    const follower = CliChild.start(['events', '--follow', '--json', '--pipeline', '999', ...flags], { cwd: root });
    try {
      await follower.waitFor(() => follower.stderr.includes('\n') || undefined, 'the note');
      expect(follower.stderr).toBe('pipeline #999 is not on the board yet: its events are printed once it is posted\n');
    } finally {
      const exit = await follower.stop('SIGTERM');
      expect(exit, follower.describe()).toEqual({ code: 0, signal: null });
    }
    expect(follower.lines.filter(Boolean)).toEqual([]);
  }, 60_000);
});

describe('autoteam events before there is a board', () => {
  it('says there are no events yet (exit 0); --follow waits for the board and prints what comes', async () => {
    const dir = tempBoard('autoteam-events-none-');
    fs.rmSync(`${dir}/.tasks`, { recursive: true, force: true });
    const none = await runCli(['events', '--dir', dir], { cwd: dir });
    expect(none.code, describeRun(none)).toBe(0);
    expect(none.stderr.trim()).toBe(`no events yet (no board in ${dir}: a lead or a worker there starts one)`);
    expect(fs.existsSync(`${dir}/.tasks`)).toBe(false);

    const follower = CliChild.start(['events', '--follow', '--json', '--dir', dir], { cwd: dir });
    try {
      await follower.waitFor(() => (follower.stderr.includes('waiting for a board') ? true : undefined), 'the follower to wait');
      // A batch the log could not take is dropped by design (the log never stalls the team): say so if it happens.
      const logErrors: string[] = [];
      const board = await openBoard(dir, dir, { onEventError: (error) => logErrors.push(String(error)) });
      const posted = await work(board, null, false);
      await board.close();
      expect(logErrors).toEqual([]);
      expect((await board.log.read()).map((event) => event.type)).toEqual(['task_posted', 'task_claimed']);
      await follower.waitFor(() => follower.lines.find((line) => line && (JSON.parse(line) as TeamEvent).type === 'task_claimed'), `the follower to print the claim of #${posted}`);
    } finally {
      const exit = await follower.stop('SIGTERM');
      expect(exit, follower.describe()).toEqual({ code: 0, signal: null });
    }
  });

  it.skipIf(!postgresBin)('on a database with no board yet, as in a folder: no events yet (exit 0), and --follow waits for the board', async () => {
    const dir = tempBoard('autoteam-events-nodb-');
    const url = await freshDatabase();
    const shown = describeUrl(url);
    const none = await runCli(['events', '--board', url, '--dir', dir], { cwd: dir });
    expect(none.code, describeRun(none)).toBe(0);
    expect(none.stderr.trim()).toBe(`no events yet (no board in ${shown}: a lead or a worker starts one)`);

    const follower = CliChild.start(['events', '--follow', '--json', '--board', url, '--dir', dir], { cwd: dir });
    try {
      await follower.waitFor(() => (follower.stderr.includes(`waiting for a board in ${shown}`) ? true : undefined), 'the follower to wait');
      const board = await openBoard(url, dir);
      boards.push(board);
      const posted = await work(board, null, false);
      await follower.waitFor(() => follower.lines.find((line) => line && (JSON.parse(line) as TeamEvent).type === 'task_claimed'), `the follower to print the claim of #${posted}`);
      expect(follower.lines.filter(Boolean).map((line) => (JSON.parse(line) as TeamEvent).type)).toEqual(['task_posted', 'task_claimed']);
    } finally {
      const exit = await follower.stop('SIGTERM');
      expect(exit, follower.describe()).toEqual({ code: 0, signal: null });
    }
  });

  it('says which lines of a file board\'s log it skipped as not events (edited by hand), and prints the rest', async () => {
    const dir = tempBoard('autoteam-events-unreadable-');
    dirs.push(dir);
    const own = await openBoard(dir, dir);
    boards.push(own);
    await work(own, 1, true);
    const file = `${dir}/.team/events.jsonl`;
    const lines = fs.readFileSync(file, 'utf8').split('\n');
    fs.writeFileSync(file, [lines[0], 'not json', lines[1], '{"seq": 99, "type": "no_such_event"}', ...lines.slice(2)].join('\n'));
    const run = await runCli(['events', '--dir', dir], { cwd: dir });
    expect(run.code, describeRun(run)).toBe(0);
    expect(run.stdout.trimEnd().split('\n')).toHaveLength(lines.filter(Boolean).length);
    expect(run.stderr.trim()).toBe(`autoteam: skipped 2 lines of the log that are not events: ${file}:2, ${file}:4`);
    // A folder in the log's place: said, not "no events yet".
    fs.rmSync(file);
    fs.mkdirSync(file);
    const folder = await runCli(['events', '--dir', dir], { cwd: dir });
    expect({ code: folder.code, stderr: folder.stderr.trim() }).toEqual({ code: 2, stderr: `autoteam: ${file}: is a folder, not the event log` });
  });

  it('--since that is negative is refused, not read as a year', async () => {
    const dir = tempBoard('autoteam-events-since-');
    const run = await runCli(['events', '--since', '-5', '--dir', dir], { cwd: dir });
    expect(run.code, describeRun(run)).toBe(2);
    expect(run.stderr).toMatch(/--since: '-5' is not an event number/);
  });
});

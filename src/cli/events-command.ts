import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { parseDuration } from '../core/agent/settings.js';
import type { EventFilter, TeamEvent } from '../core/events/schema.js';
import type { Board } from '../core/board/board-types.js';
import { BoardOutage } from '../core/board/outage.js';
import { describeUrl } from '../core/board/pg/url.js';
import { AutoteamError, BoardFileError } from '../core/errors.js';
import { noPipeline } from '../core/stages/pipeline-status.js';
import { activityView, describeTeamEvent } from '../frontend/activity.js';
import { boardOption, boardUrl, dirOption, existingBoardDir, openExisting, UsageError, warnOfBrokenConfig } from './board-options.js';
import { FileEventLog } from '../core/events/file-log.js';
import { counted } from '../core/words.js';

/** `--since`: a seq (`42`), a time (`2026-12-01T10:00:00Z`), or how long ago (`10m`, `2h`). */
export function parseSince(value: string, now = Date.now()): number | Date {
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text);
  if (/^\d+(?:\.\d+)?\s*(ms|s|m|h)$/.test(text)) return new Date(now - parseDuration(text, '--since'));
  // A time is a date first (Date.parse would take '-5' as the year -5).
  const time = /^\d{4}-\d{2}-\d{2}/.test(text) ? Date.parse(text) : Number.NaN;
  if (Number.isNaN(time)) throw new UsageError(`--since: '${value}' is not an event number, a time (2026-12-01T10:00:00Z) or how long ago (10m, 2h)`);
  return new Date(time);
}

/** One event as `autoteam events` prints it: its number, time, pipeline, and what happened. */
export function eventLine(event: TeamEvent, view = activityView(undefined, { tagPipelines: false })): string {
  const text = describeTeamEvent(event, view)?.text ?? plainLine(event);
  const time = event.ts.slice(11, 19);
  const where = event.pipeline ? ` p${event.pipeline}` : '';
  return `${String(event.seq ?? '?').padStart(5)} ${time}${where} ${text.replace(/\n/g, ' ')}`;
}

/** The events the activity stream leaves to its panels, in a line of their own. */
function plainLine(event: TeamEvent): string {
  const who = `[${event.agent ?? 'runtime'}]`;
  switch (event.type) {
    case 'task_posted':
      return `${who} posted #${event.task}${event.stage ? ` (${event.stage})` : ''}: ${event.subject}`;
    case 'tool_call':
      return `${who} ${event.tool} (${event.outcome}, ${event.durationMs} ms)`;
    case 'pipeline_status':
      return `pipeline #${event.pipeline} ${event.status}`;
    case 'teammate_spawned':
      return `${who} joined${event.model ? ` on ${event.model}` : ''}`;
    case 'teammate_idle':
      return `${who} idle${event.reason ? ` (${event.reason})` : ''}`;
    case 'teammate_woke':
      return `${who} woke${event.task ? ` for #${event.task}` : ''}`;
    case 'teammate_dead':
      return `${who} dead: ${event.reason}`;
    case 'teammate_exited':
      return `${who} exited (${event.kind}, ${event.why}): ${event.reason}`;
    case 'criterion_added':
      return `${who} criterion ${event.id}: ${event.criterion}`;
    case 'check_ran':
      return `${who} check ${event.id} ${event.ok ? 'passed' : 'failed'} (exit ${event.exitCode ?? '—'})`;
    case 'review_verdict':
      return `${who} verdict on revision ${event.revision}: ${event.verdict}${event.issues.length ? ` (${event.issues.length} issue${event.issues.length === 1 ? '' : 's'})` : ''}`;
    case 'model_call':
      return `${who} ${event.model}: ${event.inputTokens} in / ${event.outputTokens} out, ${event.latencyMs} ms (${event.purpose})`;
    case 'hook_decision':
      return `hook ${event.hook} (${event.command}): ${event.decision}`;
    case 'merge_step':
      return `merge #${event.pipeline} ${event.step}: ${event.detail}`;
    case 'mcp_server':
      return `${who} MCP server ${event.server} ${event.state}: ${event.detail}`;
    default:
      return `${event.type}${event.agent ? ` ${who}` : ''}`;
  }
}

/** `autoteam events`: the board's event log, from any shell or machine; `--follow` keeps reading. */
export function registerEventsCommand(program: Command): void {
  program
    .command('events')
    .description("print the board's events (every thread and process of the team, in order); --follow keeps printing them as they come")
    .addOption(dirOption())
    .addOption(boardOption())
    .option('--follow', 'keep printing new events until Ctrl+C')
    .option('--since <when>', 'after this event number, or since a time (2026-12-01T10:00:00Z) or how long ago (10m, 2h)')
    .option('--pipeline <n>', "only one pipeline's events")
    .option('--json', 'one JSON event a line')
    .action(async (options: { follow?: boolean; since?: string; pipeline?: string; json?: boolean }, command: Command) => {
      const filter: EventFilter = {};
      if (options.since !== undefined) filter.since = parseSince(options.since);
      if (options.pipeline !== undefined) {
        if (!/^#?\d+$/.test(options.pipeline.trim()) || Number(options.pipeline.replace('#', '')) <= 0) throw new UsageError(`--pipeline: '${options.pipeline}' is not a pipeline number`);
        filter.pipeline = Number(options.pipeline.trim().replace('#', ''));
      }
      warnOfBrokenConfig(command);
      // No board yet: nothing to print, or (following) wait for a lead or a worker to start one.
      const url = boardUrl(command);
      if (!url) {
        const dir = existingBoardDir(command);
        if (!fs.existsSync(path.join(dir, '.tasks'))) {
          if (!options.follow) {
            console.error(`no events yet (no board in ${dir}: a lead or a worker there starts one)`);
            return;
          }
          console.error(`waiting for a board in ${dir}…`);
          if (!(await appears(async () => fs.existsSync(path.join(dir, '.tasks')), FOLDER_LOOK_MS))) return;
        }
      }
      const board = await openFollowing(command, url, options.follow === true);
      if (!board) return;
      // Each line names its pipeline in a column of its own (`p2`), so the activity lines need not.
      const view = activityView(() => process.stdout.columns, { tagPipelines: false });
      const print = (event: TeamEvent) => console.log(options.json ? JSON.stringify(event) : eventLine(event, view));
      try {
        // A folder in the log's place reads as no events: said, not taken for a board with none yet.
        if (board.log instanceof FileEventLog && fs.statSync(board.log.file, { throwIfNoEntry: false })?.isDirectory()) throw new BoardFileError(board.log.file, 'is a folder, not the event log');
        if (!options.follow) {
          const events = await board.log.read(filter);
          for (const event of events) print(event);
          // Lines skipped as not events are said, not passed over in silence (a file board's log, which a person can edit).
          const skipped = board.log instanceof FileEventLog ? board.log.unreadable() : [];
          if (skipped.length) console.error(`autoteam: skipped ${counted(skipped.length, 'line')} of the log that ${skipped.length === 1 ? 'is not an event' : 'are not events'}: ${skipped.slice(0, 3).join(', ')}${skipped.length > 3 ? ', …' : ''}`);
          if (events.length > 0) return;
          // A pipeline the board has never had is a mistake in the number, as it is for `diff` and `merge`.
          const { pipeline } = filter;
          if (pipeline !== undefined) {
            await board.tasks.refresh();
            if (!board.tasks.list().some((task) => task.pipeline === pipeline)) throw noPipeline(board.tasks, pipeline);
          }
          if (!options.json) console.error('no events' + (Object.keys(filter).length ? ' match' : ' yet'));
          return;
        }
        const stop = new AbortController();
        const onSignal = () => stop.abort();
        process.once('SIGINT', onSignal);
        process.once('SIGTERM', onSignal);
        // A reader that went away (`| head`) ends the follow as Ctrl+C does.
        process.stdout.on('error', onSignal);
        const unwatch = url ? await sayOutages(board) : () => undefined;
        // Followed before it is posted (a pipeline about to come): said once, not a silent wait for a typo.
        if (filter.pipeline !== undefined) {
          await board.tasks.refresh();
          if (!board.tasks.list().some((task) => task.pipeline === filter.pipeline)) console.error(`pipeline #${filter.pipeline} is not on the board yet: its events are printed once it is posted`);
        }
        try {
          await board.log.subscribe(filter, print, stop.signal);
        } finally {
          process.off('SIGINT', onSignal);
          process.off('SIGTERM', onSignal);
          await unwatch();
        }
      } finally {
        await board.close();
      }
    });
}

/**
 * A database that goes away while it is followed is said once, on stderr, and again when it answers
 * (the follow reads on from where it was, nothing missed). Returns the stop.
 */
async function sayOutages(board: Board): Promise<() => Promise<void>> {
  const outage = new BoardOutage();
  const watcher = board.events();
  watcher.on('error', (error: Error) => {
    if (outage.report('watcher', error.message)) console.error(`${error.message}; following on when it answers`);
  });
  await watcher.start();
  const stopProbing = outage.probeEvery(() => board.tasks.refresh(), (notice) => console.error(notice));
  return async () => {
    stopProbing();
    await watcher.close();
  };
}

/** A database without autoteam's tables (schema.ts), as a lead or a worker would make them. */
const noBoardYet = (error: unknown) => error instanceof AutoteamError && error.code === 'NOT_FOUND';

/**
 * The board, or null with a line on stderr when a database has no board yet; following it, the board
 * once a lead or a worker makes it (null on Ctrl+C meanwhile). Any other failure to open it is the error it is.
 */
async function openFollowing(command: Command, url: string | undefined, follow: boolean): Promise<Board | null> {
  const attempt = () =>
    openExisting(command).catch((error: unknown) => {
      if (url && noBoardYet(error)) return null;
      throw error;
    });
  let board = (await attempt()) as Board | null;
  if (board || !url) return board;
  if (!follow) {
    console.error(`no events yet (no board in ${describeUrl(url)}: a lead or a worker starts one)`);
    return null;
  }
  console.error(`waiting for a board in ${describeUrl(url)}…`);
  if (await appears(async () => (board = await attempt()) !== null, DATABASE_LOOK_MS)) return board;
  // Ctrl+C while the board was being opened.
  await (board as Board | null)?.close();
  return null;
}

/** How often a follow with no board yet looks again: a folder (a stat), a database (a connection and a query). */
const FOLDER_LOOK_MS = 200;
const DATABASE_LOOK_MS = 1_000;

/** Waits until `exists` says so (true), or Ctrl+C (false). */
async function appears(exists: () => Promise<boolean>, everyMs: number): Promise<boolean> {
  let stopped = false;
  const onSignal = () => (stopped = true);
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    while (!stopped && !(await exists())) await new Promise((resolve) => setTimeout(resolve, everyMs));
    return !stopped;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

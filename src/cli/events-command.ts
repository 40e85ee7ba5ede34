import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { parseDuration } from '../core/agent/settings.js';
import type { EventFilter, TeamEvent } from '../core/events/schema.js';
import { noPipeline } from '../core/stages/pipeline-status.js';
import { activityView, describeTeamEvent } from '../frontend/activity.js';
import { boardOption, boardUrl, dirOption, existingBoardDir, openExisting, UsageError, warnOfBrokenConfig } from './board-options.js';

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
      if (!boardUrl(command)) {
        const dir = existingBoardDir(command);
        if (!fs.existsSync(path.join(dir, '.tasks'))) {
          if (!options.follow) {
            console.error(`no events yet (no board in ${dir}: a lead or a worker there starts one)`);
            return;
          }
          console.error(`waiting for a board in ${dir}…`);
          if (!(await boardAppears(dir))) return;
        }
      }
      const board = await openExisting(command);
      // Each line names its pipeline in a column of its own (`p2`), so the activity lines need not.
      const view = activityView(() => process.stdout.columns, { tagPipelines: false });
      const print = (event: TeamEvent) => console.log(options.json ? JSON.stringify(event) : eventLine(event, view));
      try {
        if (!options.follow) {
          const events = await board.log.read(filter);
          for (const event of events) print(event);
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
        try {
          await board.log.subscribe(filter, print, stop.signal);
        } finally {
          process.off('SIGINT', onSignal);
          process.off('SIGTERM', onSignal);
        }
      } finally {
        await board.close();
      }
    });
}

/** Waits until `dir` holds a board (true), or Ctrl+C (false). */
async function boardAppears(dir: string): Promise<boolean> {
  let stopped = false;
  const onSignal = () => (stopped = true);
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    while (!stopped && !fs.existsSync(path.join(dir, '.tasks'))) await new Promise((resolve) => setTimeout(resolve, 200));
    return !stopped;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

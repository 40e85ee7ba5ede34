import type { Command } from 'commander';
import { parseDuration } from '../core/agent/settings.js';
import type { EventFilter, TeamEvent } from '../core/events/schema.js';
import { activityView, describeTeamEvent } from '../frontend/activity.js';
import { boardOption, dirOption, openExisting, UsageError } from './board-options.js';

/** `--since`: a seq (`42`), a time (`2026-12-01T10:00:00Z`), or how long ago (`10m`, `2h`). */
export function parseSince(value: string, now = Date.now()): number | Date {
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text);
  const ago = /^(\d+(?:\.\d+)?)\s*h$/.exec(text);
  if (ago) return new Date(now - Number(ago[1]) * 3_600_000);
  if (/^\d+(?:\.\d+)?\s*(ms|s|m)$/.test(text)) return new Date(now - parseDuration(text, '--since'));
  const time = Date.parse(text);
  if (Number.isNaN(time)) throw new UsageError(`--since: '${value}' is not an event number, a time (2026-12-01T10:00:00Z) or how long ago (10m, 2h)`);
  return new Date(time);
}

/** One event as `autoteam events` prints it: its number, time, and the activity line (or the raw type). */
export function eventLine(event: TeamEvent, view = activityView()): string {
  const line = describeTeamEvent(event, view);
  const time = event.ts.slice(11, 19);
  const where = event.pipeline ? ` #${event.pipeline}` : '';
  return `${String(event.seq ?? '?').padStart(5)} ${time}${where} ${line ? line.text.replace(/\n/g, ' ') : `${event.type}${event.agent ? ` [${event.agent}]` : ''}`}`;
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
      const board = await openExisting(command);
      const view = activityView(() => process.stdout.columns);
      const print = (event: TeamEvent) => console.log(options.json ? JSON.stringify(event) : eventLine(event, view));
      try {
        if (!options.follow) {
          const events = await board.log.read(filter);
          for (const event of events) print(event);
          if (events.length === 0 && !options.json) console.error('no events' + (Object.keys(filter).length ? ' match' : ' yet'));
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

/**
 * One thread or process of a team, for telemetry tests: emits `events` through a real EventSink
 * (whose log is the board's `.team/events.jsonl` when `rootDir` is given) tapped by `startTelemetry`,
 * then flushes the log and shuts telemetry down, as the runtime does when a thread ends.
 */
import { EventSink } from '../../src/core/events/emitter.js';
import { FileEventLog } from '../../src/core/events/file-log.js';
import type { EventInput } from '../../src/core/events/schema.js';
import { startTelemetry } from '../../src/core/telemetry/telemetry.js';

export interface TelemetryJob {
  env: Record<string, string>;
  team: string;
  events: EventInput[];
  /** The board folder whose event log the sink appends to. */
  rootDir?: string;
  /** Give telemetry the board, to read what this thread did not see. */
  withBoard?: boolean;
}

export interface TelemetryJobResult {
  on: boolean;
  errors: string[];
}

export async function runTelemetryJob(job: TelemetryJob): Promise<TelemetryJobResult> {
  const errors: string[] = [];
  const log = job.rootDir ? new FileEventLog(job.rootDir) : null;
  const telemetry = await startTelemetry(job.env, {
    ...(job.withBoard && log ? { board: { log } } : {}),
    onError: (error) => errors.push(`${(error as { code?: string }).code ?? error.name}: ${error.message}`),
  });
  const sink = new EventSink(log, () => job.team, (error) => errors.push(`log: ${String(error)}`));
  if (telemetry) sink.tap(telemetry.tap);
  for (const event of job.events) sink.emit(event);
  await sink.flush();
  await telemetry?.shutdown();
  return { on: telemetry !== null, errors };
}

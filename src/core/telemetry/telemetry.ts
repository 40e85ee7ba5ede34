import type { EventTap } from '../events/emitter.js';
import type { EventLog } from '../events/log.js';
import type { TeamEvent } from '../events/schema.js';
import { secretValues } from '../trace/redact.js';
import { type Lookup, SpanAssembler } from './assembler.js';
import { readTelemetryConfig } from './config.js';
import type { SpanRecord } from './span-record.js';

/** Traces of one thread or process: tap its EventSink, and shut down when it ends. */
export interface Telemetry {
  /** `sink.tap(telemetry.tap)`: turns the events this thread or process emits into spans. */
  readonly tap: EventTap;
  /**
   * Exports what is left and stops, within `withinMs` (default FINAL_FLUSH_MS; a collector that has
   * not answered by then is reported); later events are ignored.
   */
  shutdown(withinMs?: number): Promise<void>;
}

export interface TelemetryOptions {
  /**
   * The board, whose log tells what this thread did not see: when a pipeline it ends began (its
   * first task_posted), the claim of a dead teammate whose task it releases.
   */
  board?: { readonly log: Pick<EventLog, 'read'> };
  /** Told once per failure streak when spans cannot be sent (default: nothing; the team goes on). */
  onError?: (error: Error) => void;
  /**
   * Checks at once that something listens at the collector's address, and tells `onError` if not
   * (SpanWriter.probe): for the process a person watches (the lead's, a worker's), not for each of
   * its threads.
   */
  probe?: boolean;
}

/** How many of a task's newest claims are read to find the one a dead teammate held. */
const CLAIMS_READ = 500;

/**
 * How long the last export may take as a thread or process ends: within a teammate's stop grace (3 s
 * when the lead closes), so that a collector that hangs is reported before the thread is ended.
 */
export const FINAL_FLUSH_MS = 2_000;

/**
 * OpenTelemetry traces of the events this thread or process emits, or null when they are off (no
 * `OTEL_EXPORTER_OTLP_ENDPOINT` / `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, or `OTEL_SDK_DISABLED=true`).
 * Off, no OpenTelemetry module is loaded. A value that cannot work throws a ConfigError naming it.
 */
export async function startTelemetry(env: NodeJS.ProcessEnv = process.env, options: TelemetryOptions = {}): Promise<Telemetry | null> {
  const config = readTelemetryConfig(env);
  if (!config) return null;
  const secrets = secretValues(env);
  const onError = options.onError ?? (() => undefined);
  const { createSpanWriter } = await import('./otlp-writer.js');
  const writer = await createSpanWriter(config, secrets, onError);
  if (options.probe) void writer.probe();
  const assembler = new SpanAssembler({ capture: config.captureContent, secrets });
  const pending = new Set<Promise<void>>();
  let closed = false;
  let tapFailing = false;

  const readLog = async (filter: Parameters<EventLog['read']>[0], limit?: number): Promise<TeamEvent[]> => {
    try {
      return (await options.board?.log.read(filter, limit)) ?? [];
    } catch (error) {
      // An unreadable log costs the span its exact start (or a dead claimant's attempt), no more.
      onError(error instanceof Error ? error : new Error(String(error)));
      return [];
    }
  };
  const resolve = async (lookup: Lookup): Promise<SpanRecord | null> => {
    if (lookup.lookup === 'pipeline_start') {
      const posted = await readLog({ pipeline: lookup.end.pipeline!, types: ['task_posted'] });
      const starts = posted.filter((event) => event.team === lookup.end.team).map((event) => Date.parse(event.ts));
      return assembler.pipelineSpan(lookup.end, starts.length ? Math.min(...starts) : lookup.fallbackMs);
    }
    const { end } = lookup;
    const claims = await readLog({ ...(end.pipeline != null ? { pipeline: end.pipeline } : {}), types: ['task_claimed'] }, CLAIMS_READ);
    const claim = claims.filter((event) => event.team === end.team && event.task === end.task && Date.parse(event.ts) <= Date.parse(end.ts)).at(-1);
    return claim?.type === 'task_claimed' ? assembler.attemptSpan({ claim, events: [] }, end) : null;
  };

  const tap: EventTap = (event) => {
    if (closed) return;
    try {
      for (const output of assembler.accept(event)) {
        if (!('lookup' in output)) {
          writer.write(output);
          continue;
        }
        const job: Promise<void> = resolve(output)
          .then((span) => {
            if (span && !closed) writer.write(span);
          })
          .catch((error: unknown) => onError(error instanceof Error ? error : new Error(String(error))))
          .finally(() => pending.delete(job));
        pending.add(job);
      }
      tapFailing = false;
    } catch (error) {
      // A bad event must not cost the others; say so once per streak.
      if (!tapFailing) onError(error instanceof Error ? error : new Error(String(error)));
      tapFailing = true;
    }
  };

  let stopping: Promise<void> | null = null;
  return {
    tap,
    shutdown(withinMs = FINAL_FLUSH_MS) {
      stopping ??= (async () => {
        // Lookups still running may yet write their span; events after them are not traced.
        await Promise.all([...pending]);
        closed = true;
        await writer.shutdown(withinMs);
      })();
      return stopping;
    },
  };
}

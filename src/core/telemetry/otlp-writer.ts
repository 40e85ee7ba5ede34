/**
 * The OpenTelemetry SDK side, loaded only when traces are on (telemetry.ts imports this file
 * dynamically): a tracer provider of its own (nothing is registered globally), a batch processor
 * and the OTLP/HTTP exporter for the configured protocol. Each `SpanRecord` becomes one SDK span
 * with its recorded times and the ids the records carry.
 */
import net from 'node:net';
import { type HrTime, ROOT_CONTEXT, SpanKind, SpanStatusCode, TraceFlags, trace } from '@opentelemetry/api';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, type IdGenerator, RandomIdGenerator, type ReadableSpan, type SpanExporter, TracerProvider } from '@opentelemetry/sdk-trace';
import { AutoteamError } from '../errors.js';
import { redact } from '../trace/redact.js';
import { within } from '../within.js';
import type { TelemetryConfig } from './config.js';
import type { AttributeValue, Attributes, SpanRecord } from './span-record.js';

export interface SpanWriter {
  write(span: SpanRecord): void;
  /**
   * Whether anything listens at the collector's address (a TCP connection, closed at once): one that
   * does not is reported now, as a failed export would be, rather than at the first export — which,
   * in a run shorter than the batch delay, is the flush at its end.
   */
  probe(): Promise<void>;
  /**
   * Sends what is queued and stops, within `withinMs`: a collector that has not answered by then is
   * reported (what was still queued is dropped), rather than the thread or process ending under it
   * with nothing said.
   */
  shutdown(withinMs: number): Promise<void>;
}

/** Spans could not be sent: the collector is down, refused them, or timed out. The team goes on. */
export class TelemetryExportError extends AutoteamError {
  constructor(message: string) {
    super(message, 'TELEMETRY_EXPORT');
  }
}

export async function createSpanWriter(config: TelemetryConfig, secrets: readonly string[], onError: (error: Error) => void): Promise<SpanWriter> {
  const { OTLPTraceExporter } =
    config.protocol === 'http/json' ? await import('@opentelemetry/exporter-trace-otlp-http') : await import('@opentelemetry/exporter-trace-otlp-proto');
  const exporter = new OTLPTraceExporter({
    url: config.url,
    headers: config.headers,
    ...(config.timeoutMs !== undefined ? { timeoutMillis: config.timeoutMs } : {}),
  });
  const ids = new PlannedIds();
  const reporting = new ReportingExporter(exporter, config.url, secrets, onError);
  const provider = new TracerProvider({
    resource: defaultResource().merge(resourceFromAttributes({ ...config.resourceAttributes, 'service.name': config.serviceName, 'process.pid': process.pid })),
    idGenerator: ids,
    spanProcessors: [new BatchSpanProcessor({ exporter: reporting })],
  });
  const tracer = provider.getTracer('autoteam');

  return {
    write(written) {
      const record = scrubbed(written, secrets);
      const parent =
        record.traceId !== null && record.parentSpanId !== null
          ? trace.setSpanContext(ROOT_CONTEXT, { traceId: record.traceId, spanId: record.parentSpanId, traceFlags: TraceFlags.SAMPLED, isRemote: true })
          : ROOT_CONTEXT;
      // The tracer asks the id generator for this span's id (and a root's trace id) inside startSpan.
      ids.plan(record.parentSpanId === null ? record.traceId : null, record.spanId);
      let span;
      try {
        span = tracer.startSpan(record.name, { kind: record.kind === 'client' ? SpanKind.CLIENT : SpanKind.INTERNAL, startTime: hrTime(record.startMs), attributes: record.attributes }, parent);
      } finally {
        ids.plan(null, null);
      }
      for (const event of record.events) span.addEvent(event.name, event.attributes, hrTime(event.timeMs));
      if (record.status.code === 'error') span.setStatus({ code: SpanStatusCode.ERROR, ...(record.status.message ? { message: record.status.message } : {}) });
      span.end(hrTime(record.endMs));
    },
    probe: () =>
      connects(config.url, config.timeoutMs ?? DEFAULT_EXPORT_TIMEOUT_MS).then(
        () => undefined,
        (error: unknown) => reporting.failed(error),
      ),
    // A thread's end must not fail on its traces: a failed last export has been reported already.
    async shutdown(withinMs) {
      const done = provider.shutdown().then(
        () => 'done' as const,
        (error: unknown) => reporting.failed(error),
      );
      if ((await within(done, withinMs, 'late' as const)) === 'late') reporting.failed(new Error(`no answer within ${formatMs(withinMs)} at the end; the spans still queued were dropped`));
    },
  };
}

/**
 * The record with the environment's secrets redacted from every text it carries — name, attributes,
 * events, status — whichever way the assembler built it: the last gate before a span leaves.
 */
export function scrubbed(record: SpanRecord, secrets: readonly string[]): SpanRecord {
  const clean = (text: string) => redact(text, secrets);
  const attributes = (values: Attributes): Attributes => Object.fromEntries(Object.entries(values).map(([name, value]) => [name, scrubValue(value, clean)]));
  return {
    ...record,
    name: clean(record.name),
    attributes: attributes(record.attributes),
    events: record.events.map((event) => ({ ...event, name: clean(event.name), attributes: attributes(event.attributes) })),
    status: record.status.code === 'error' && record.status.message ? { ...record.status, message: clean(record.status.message) } : record.status,
  };
}

function scrubValue(value: AttributeValue, clean: (text: string) => string): AttributeValue {
  if (typeof value === 'string') return clean(value);
  if (Array.isArray(value)) return value.map(clean);
  return value;
}

function formatMs(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${Math.round(ms / 100) / 10} s`;
}

/** The exporter's own default when OTEL_EXPORTER_OTLP_TIMEOUT is not set. */
const DEFAULT_EXPORT_TIMEOUT_MS = 10_000;

/** Resolves once a TCP connection to the URL's host and port opened (and closes it); rejects with why not. */
function connects(url: string, timeoutMs: number): Promise<void> {
  const { hostname, port, protocol } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: hostname.replace(/^\[(.*)\]$/, '$1'), port: Number(port || (protocol === 'https:' ? 443 : 80)) });
    socket.setTimeout(timeoutMs, () => socket.destroy(new Error(`no connection within ${Math.round(timeoutMs / 1000)} s`)));
    socket.once('connect', () => {
      socket.destroy();
      resolve();
    });
    socket.once('error', reject);
  });
}

/**
 * Times as [seconds, nanoseconds]: a plain number before this process started would be read as
 * `performance.now()` by the SDK, and a pipeline's start is often older than the process ending it.
 */
function hrTime(ms: number): HrTime {
  const seconds = Math.floor(ms / 1000);
  return [seconds, Math.round((ms - seconds * 1000) * 1e6)];
}

/** Hands out the ids planned for the next span, and random ones otherwise. */
class PlannedIds implements IdGenerator {
  private readonly random = new RandomIdGenerator();
  private traceId: string | null = null;
  private spanId: string | null = null;

  plan(traceId: string | null, spanId: string | null): void {
    this.traceId = traceId;
    this.spanId = spanId;
  }

  generateTraceId(): string {
    return this.traceId ?? this.random.generateTraceId();
  }

  generateSpanId(): string {
    return this.spanId ?? this.random.generateSpanId();
  }
}

type ExportResult = Parameters<Parameters<SpanExporter['export']>[1]>[0];

/** Tells `onError` once per failure streak (the exporter itself says nothing), like the event sink. */
class ReportingExporter implements SpanExporter {
  private failing = false;

  /** An export failure seen by another way (the flush at shutdown): reported unless it was already. */
  failed(error: unknown): void {
    if (!this.failing) this.report(error instanceof Error ? error : new Error(String(error)));
    this.failing = true;
  }

  constructor(
    private readonly inner: SpanExporter,
    private readonly url: string,
    private readonly secrets: readonly string[],
    private readonly onError: (error: Error) => void,
  ) {}

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.inner.export(spans, (result) => {
      if (result.error || result.code !== 0) {
        if (!this.failing) this.report(result.error);
        this.failing = true;
      } else this.failing = false;
      done(result);
    });
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }

  private report(error: Error | undefined): void {
    // The origin only: a URL's path or credentials and the headers stay out of messages.
    const detail = redact(error?.message ?? 'export failed', this.secrets);
    try {
      this.onError(new TelemetryExportError(`traces could not be sent to ${new URL(this.url).origin}: ${detail}`));
    } catch {
      // The reporter's failure is its own.
    }
  }
}

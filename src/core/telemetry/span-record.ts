/**
 * A finished span as plain data: what the events say, before any OpenTelemetry object exists. The
 * assembler builds these from events; the OTLP writer turns each into one SDK span.
 */

export type AttributeValue = string | number | boolean | string[];
export type Attributes = Record<string, AttributeValue>;

export interface SpanEventRecord {
  name: string;
  timeMs: number;
  attributes: Attributes;
}

export interface SpanRecord {
  name: string;
  /** `client` for a model call (a remote service), `internal` for the rest. */
  kind: 'internal' | 'client';
  /** Null: a span outside any pipeline or task (the lead's own chat), in a random trace of its own. */
  traceId: string | null;
  /** Null: random (model and tool calls, which nothing else needs to find). */
  spanId: string | null;
  /** In `traceId`; null for a root span. */
  parentSpanId: string | null;
  startMs: number;
  endMs: number;
  attributes: Attributes;
  /** `error` with a message, or `unset` (OpenTelemetry's advice: leave success unset). */
  status: { code: 'unset' | 'error'; message?: string };
  events: SpanEventRecord[];
}

/**
 * A loopback OTLP/HTTP traces receiver: `POST /v1/traces` with `application/x-protobuf` (decoded by
 * protobufjs with the OTLP definitions in otlp-trace.proto) or `application/json` (OTLP/JSON), gzip
 * or not. Both become the same plain spans, so a test reads what a collector would have stored.
 *
 * ```ts
 * const receiver = await OtlpReceiver.start();
 * const telemetry = await startTelemetry({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url });
 * …
 * await telemetry!.shutdown();            // the export has been answered when this resolves
 * expect(receiver.spans().map((s) => s.name)).toContain('pipeline 7');
 * receiver.assertNoErrors();
 * await receiver.close();
 * ```
 *
 * A request to another path, of another content type, or that does not decode is answered 400
 * (which the exporter does not retry) and recorded in `errors`.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import protobuf from 'protobufjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const ExportRequest = protobuf.loadSync(path.join(here, 'otlp-trace.proto')).lookupType('otlp.ExportTraceServiceRequest');

export type Value = string | number | boolean | Value[] | { [key: string]: Value } | null;

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** '' for a root span. */
  parentSpanId: string;
  name: string;
  /** 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  startNs: bigint;
  endNs: bigint;
  attributes: Record<string, Value>;
  /** 0 unset, 1 ok, 2 error. */
  status: { code: number; message: string };
  events: Array<{ name: string; timeNs: bigint; attributes: Record<string, Value> }>;
  resource: Record<string, Value>;
  scope: string;
}

export interface ReceivedRequest {
  path: string;
  headers: Record<string, string>;
  contentType: string;
  /** The body as sent (decompressed), to look for text that must not be there. */
  raw: Buffer;
  spans: ReceivedSpan[];
}

export class OtlpReceiver {
  readonly requests: ReceivedRequest[] = [];
  readonly errors: string[] = [];

  private constructor(
    private readonly server: Server,
    /** The base URL, for `OTEL_EXPORTER_OTLP_ENDPOINT`. */
    readonly url: string,
  ) {}

  static async start(): Promise<OtlpReceiver> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const receiver = new OtlpReceiver(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    server.on('request', (request, response) => {
      void receiver.receive(request).then(
        () => {
          response.writeHead(200, { 'content-type': request.headers['content-type'] ?? 'application/json' });
          // An empty ExportTraceServiceResponse, in either encoding.
          response.end(String(request.headers['content-type']).includes('json') ? '{}' : '');
        },
        (error: Error) => {
          receiver.errors.push(`${request.method} ${request.url}: ${error.message}`);
          response.writeHead(400, { 'content-type': 'text/plain' });
          response.end(error.message);
        },
      );
    });
    return receiver;
  }

  /** Every span received so far, in arrival order. */
  spans(): ReceivedSpan[] {
    return this.requests.flatMap((request) => request.spans);
  }

  assertNoErrors(): void {
    if (this.errors.length) throw new Error(`the OTLP receiver refused requests:\n${this.errors.join('\n')}`);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async receive(request: IncomingMessage): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    let raw = Buffer.concat(chunks);
    if (request.method !== 'POST' || request.url !== '/v1/traces') throw new Error('only POST /v1/traces is served');
    if (request.headers['content-encoding'] === 'gzip') raw = gunzipSync(raw);
    const contentType = String(request.headers['content-type'] ?? '');
    const headers = Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name, Array.isArray(value) ? value.join(', ') : String(value)]));
    let body: any;
    if (contentType.startsWith('application/x-protobuf')) {
      body = ExportRequest.toObject(ExportRequest.decode(raw), { longs: String, bytes: Buffer, defaults: false, oneofs: false });
    } else if (contentType.startsWith('application/json')) {
      body = JSON.parse(raw.toString('utf8'));
    } else {
      throw new Error(`unexpected content-type '${contentType}'`);
    }
    const spans: ReceivedSpan[] = [];
    for (const resourceSpans of body.resourceSpans ?? []) {
      const resource = attributes(resourceSpans.resource?.attributes);
      for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
        for (const span of scopeSpans.spans ?? []) {
          spans.push({
            traceId: id(span.traceId),
            spanId: id(span.spanId),
            parentSpanId: id(span.parentSpanId),
            name: span.name,
            kind: Number(span.kind ?? 0),
            startNs: BigInt(span.startTimeUnixNano),
            endNs: BigInt(span.endTimeUnixNano),
            attributes: attributes(span.attributes),
            status: { code: Number(span.status?.code ?? 0), message: span.status?.message ?? '' },
            events: (span.events ?? []).map((event: any) => ({ name: event.name, timeNs: BigInt(event.timeUnixNano), attributes: attributes(event.attributes) })),
            resource,
            scope: scopeSpans.scope?.name ?? '',
          });
        }
      }
    }
    this.requests.push({ path: request.url, headers, contentType, raw, spans });
  }
}

/** Ids are bytes in protobuf and hex strings in OTLP/JSON. */
function id(value: unknown): string {
  if (value === undefined || value === null || value === '') return '';
  return Buffer.isBuffer(value) ? value.toString('hex') : String(value).toLowerCase();
}

function attributes(list: any[] | undefined): Record<string, Value> {
  return Object.fromEntries((list ?? []).map((entry) => [entry.key, anyValue(entry.value)]));
}

/** OTLP's AnyValue, the same in both encodings once protobufjs names fields in camelCase. */
function anyValue(value: any): Value {
  if (!value) return null;
  if ('stringValue' in value) return value.stringValue;
  if ('boolValue' in value) return value.boolValue;
  if ('intValue' in value) return Number(value.intValue);
  if ('doubleValue' in value) return Number(value.doubleValue);
  if ('arrayValue' in value) return (value.arrayValue.values ?? []).map(anyValue);
  if ('kvlistValue' in value) return attributes(value.kvlistValue.values);
  if ('bytesValue' in value) return Buffer.from(value.bytesValue).toString('hex');
  return null;
}

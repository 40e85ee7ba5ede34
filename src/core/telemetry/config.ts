import { ConfigError } from '../errors.js';

/** The OTLP transports autoteam speaks (gRPC would add a native-free but heavy stack for no gain here). */
export const OTLP_PROTOCOLS = ['http/protobuf', 'http/json'] as const;
export type OtlpProtocol = (typeof OTLP_PROTOCOLS)[number];

/** Where and how traces go, read from the standard OpenTelemetry variables. */
export interface TelemetryConfig {
  /** The full traces URL (`…/v1/traces`). */
  url: string;
  protocol: OtlpProtocol;
  /** Sent with every export; may hold a collector's key, so never printed. */
  headers: Record<string, string>;
  serviceName: string;
  /** `OTEL_RESOURCE_ATTRIBUTES`, besides `service.name`. */
  resourceAttributes: Record<string, string>;
  timeoutMs: number | undefined;
  /** Model text, tool arguments and task results on spans (`AUTOTEAM_OTEL_CAPTURE_CONTENT`). */
  captureContent: boolean;
}

const TRUE = ['true', '1', 'yes', 'on'];
const FALSE = ['false', '0', 'no', 'off'];

/**
 * The telemetry settings of `env`, or null when traces are off: no endpoint is set, or
 * `OTEL_SDK_DISABLED=true`. A value that cannot work is a ConfigError naming its variable (never
 * echoing a URL or a header, which may carry credentials).
 */
export function readTelemetryConfig(env: NodeJS.ProcessEnv): TelemetryConfig | null {
  const read = (name: string): string | undefined => {
    const value = env[name]?.trim();
    return value ? value : undefined;
  };
  if (flag(read, 'OTEL_SDK_DISABLED')) return null;
  const url = tracesUrl(read);
  if (!url) return null;

  const protocolVariable = read('OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL' : 'OTEL_EXPORTER_OTLP_PROTOCOL';
  const protocol = read(protocolVariable) ?? 'http/protobuf';
  if (!(OTLP_PROTOCOLS as readonly string[]).includes(protocol)) {
    throw new ConfigError(`${protocolVariable}: '${protocol}' is not supported; use http/protobuf or http/json`);
  }

  const resourceAttributes = keyValues(read, 'OTEL_RESOURCE_ATTRIBUTES');
  const serviceName = read('OTEL_SERVICE_NAME') ?? resourceAttributes['service.name'] ?? 'autoteam';
  delete resourceAttributes['service.name'];

  return {
    url,
    protocol: protocol as OtlpProtocol,
    // The signal's own headers win over the shared ones, as the specification says.
    headers: { ...keyValues(read, 'OTEL_EXPORTER_OTLP_HEADERS'), ...keyValues(read, 'OTEL_EXPORTER_OTLP_TRACES_HEADERS') },
    serviceName,
    resourceAttributes,
    timeoutMs: milliseconds(read, 'OTEL_EXPORTER_OTLP_TRACES_TIMEOUT') ?? milliseconds(read, 'OTEL_EXPORTER_OTLP_TIMEOUT'),
    captureContent: flag(read, 'AUTOTEAM_OTEL_CAPTURE_CONTENT'),
  };
}

type Read = (name: string) => string | undefined;

function tracesUrl(read: Read): string | null {
  // The traces endpoint is used as given; the shared one is a base that gets `v1/traces`.
  const specific = read('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  if (specific) return httpUrl(specific, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  const base = read('OTEL_EXPORTER_OTLP_ENDPOINT');
  if (!base) return null;
  return httpUrl(`${base.endsWith('/') ? base : `${base}/`}v1/traces`, 'OTEL_EXPORTER_OTLP_ENDPOINT');
}

function httpUrl(value: string, variable: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(`${variable} is not a URL; expected one such as http://localhost:4318`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(`${variable} must be an http:// or https:// URL (such as http://localhost:4318)`);
  }
  return url.href;
}

function flag(read: Read, variable: string): boolean {
  const value = read(variable)?.toLowerCase();
  if (value === undefined || FALSE.includes(value)) return false;
  if (TRUE.includes(value)) return true;
  throw new ConfigError(`${variable}: '${value}' is not true or false`);
}

function milliseconds(read: Read, variable: string): number | undefined {
  const value = read(variable);
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) <= 0) throw new ConfigError(`${variable}: '${value}' is not a positive number of milliseconds`);
  return Number(value);
}

/** `key1=value1,key2=value2`, values percent-encoded (the W3C Baggage form the variables use). */
function keyValues(read: Read, variable: string): Record<string, string> {
  const out: Record<string, string> = {};
  const value = read(variable);
  if (!value) return out;
  value.split(',').forEach((entry, index) => {
    if (!entry.trim()) return;
    const at = entry.indexOf('=');
    const key = at > 0 ? entry.slice(0, at).trim() : '';
    if (!key) throw new ConfigError(`${variable}: entry ${index + 1} is not key=value`);
    try {
      out[key] = decodeURIComponent(entry.slice(at + 1).trim());
    } catch {
      throw new ConfigError(`${variable}: the value of '${key}' is not percent-encoded correctly`);
    }
  });
  return out;
}

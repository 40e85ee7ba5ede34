/** The standard OpenTelemetry variables, as autoteam reads them. */
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/core/errors.js';
import { readTelemetryConfig } from '../../src/core/telemetry/config.js';

describe('readTelemetryConfig', () => {
  it('is off without an endpoint, and when the SDK is disabled', () => {
    expect(readTelemetryConfig({})).toBeNull();
    expect(readTelemetryConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: '  ' })).toBeNull();
    expect(readTelemetryConfig({ OTEL_SDK_DISABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://localhost:4318' })).toBeNull();
    expect(readTelemetryConfig({ OTEL_SDK_DISABLED: 'TRUE', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://localhost:4318/v1/traces' })).toBeNull();
    expect(readTelemetryConfig({ OTEL_SDK_DISABLED: 'false', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://localhost:4318' })).not.toBeNull();
  });

  it('appends v1/traces to the shared endpoint and takes the traces endpoint as it is', () => {
    expect(readTelemetryConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://localhost:4318' })?.url).toBe('http://localhost:4318/v1/traces');
    expect(readTelemetryConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otel.example.com/base/' })?.url).toBe('https://otel.example.com/base/v1/traces');
    expect(
      readTelemetryConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://ignored:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:9999/custom' })?.url,
    ).toBe('http://collector:9999/custom');
  });

  it('defaults to http/protobuf and service autoteam, content off', () => {
    expect(readTelemetryConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://localhost:4318' })).toEqual({
      url: 'http://localhost:4318/v1/traces',
      protocol: 'http/protobuf',
      headers: {},
      serviceName: 'autoteam',
      resourceAttributes: {},
      timeoutMs: undefined,
      captureContent: false,
    });
  });

  it('reads the protocol, headers, service name, resource attributes, timeout and content capture', () => {
    const config = readTelemetryConfig({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://localhost:4318',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
      OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20k1, x-tenant = a ,x-shared=1',
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-tenant=b',
      OTEL_SERVICE_NAME: 'my-team',
      OTEL_RESOURCE_ATTRIBUTES: 'service.name=other,deployment.environment=ci',
      OTEL_EXPORTER_OTLP_TIMEOUT: '5000',
      AUTOTEAM_OTEL_CAPTURE_CONTENT: 'true',
    });
    expect(config).toMatchObject({
      protocol: 'http/json',
      headers: { authorization: 'Bearer k1', 'x-tenant': 'b', 'x-shared': '1' },
      serviceName: 'my-team',
      resourceAttributes: { 'deployment.environment': 'ci' },
      timeoutMs: 5000,
      captureContent: true,
    });
    expect(readTelemetryConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://x', OTEL_RESOURCE_ATTRIBUTES: 'service.name=from-resource' })?.serviceName).toBe('from-resource');
  });

  it('refuses what cannot work, naming the variable and never echoing a URL or a header value', () => {
    const refusal = (env: NodeJS.ProcessEnv) => {
      try {
        readTelemetryConfig(env);
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError);
        return (error as Error).message;
      }
      throw new Error('expected a ConfigError');
    };
    const base = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://localhost:4318' };
    expect(refusal({ ...base, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toBe("OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' is not supported; use http/protobuf or http/json");
    expect(refusal({ OTEL_EXPORTER_OTLP_ENDPOINT: 'localhost:4318 with s3cret' })).not.toContain('s3cret');
    expect(refusal({ OTEL_EXPORTER_OTLP_ENDPOINT: 'ftp://user:s3cret@host' })).toMatch(/^OTEL_EXPORTER_OTLP_ENDPOINT must be an http/);
    expect(refusal({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'nope' })).toMatch(/^OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is not a URL/);
    const header = refusal({ ...base, OTEL_EXPORTER_OTLP_HEADERS: 'x-ok=1,s3cret-without-a-name' });
    expect(header).toBe('OTEL_EXPORTER_OTLP_HEADERS: entry 2 is not key=value');
    expect(refusal({ ...base, OTEL_EXPORTER_OTLP_HEADERS: 'authorization=%E0%A4%A' })).not.toContain('%E0');
    expect(refusal({ ...base, OTEL_EXPORTER_OTLP_TIMEOUT: '10s' })).toBe("OTEL_EXPORTER_OTLP_TIMEOUT: '10s' is not a positive number of milliseconds");
    expect(refusal({ ...base, AUTOTEAM_OTEL_CAPTURE_CONTENT: 'sometimes' })).toBe("AUTOTEAM_OTEL_CAPTURE_CONTENT: 'sometimes' is not true or false");
  });
});

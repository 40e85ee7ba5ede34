/**
 * `node --import tsx telemetry-off-probe.ts <endpoint>`: in a fresh process, which OpenTelemetry
 * modules are loaded after startTelemetry without an endpoint, with the SDK disabled, and with an
 * endpoint. The packages are CommonJS, so whatever loads them is in require.cache. Prints one JSON line.
 */
import { createRequire } from 'node:module';
import { startTelemetry } from '../../src/core/telemetry/telemetry.js';

const require = createRequire(import.meta.url);
const loaded = () => Object.keys(require.cache).filter((file) => file.includes('@opentelemetry')).length;
const endpoint = process.argv[2]!;

const none = await startTelemetry({ PATH: process.env.PATH });
const afterNone = loaded();
const disabled = await startTelemetry({ OTEL_SDK_DISABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: endpoint });
const afterDisabled = loaded();
const on = await startTelemetry({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint });
const afterOn = loaded();
await on?.shutdown();
process.stdout.write(`${JSON.stringify({ none: none === null, afterNone, disabled: disabled === null, afterDisabled, on: on !== null, afterOn })}\n`);

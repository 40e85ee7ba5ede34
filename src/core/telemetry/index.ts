export { startTelemetry, type Telemetry, type TelemetryOptions } from './telemetry.js';
export { readTelemetryConfig, type TelemetryConfig, type OtlpProtocol } from './config.js';
export { attachTelemetry } from './attach.js';

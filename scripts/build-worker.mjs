// Bundles the teammate thread (dist/worker/teammate-worker.js, compiled by tsc) into
// dist/worker/bundle: one module for what every thread loads, and a chunk for each part it loads
// only when needed (a provider's SDK, execa, the MCP client, each tool). Part of `npm run build`.
//
// Every teammate thread is its own V8 isolate: each compiles and holds the source of every module it
// imports. Unbundled, that is some 300 files (the Anthropic SDK alone is 272); bundled with
// whitespace and syntax minified, an idle teammate holds about 7 MB less (the scale benchmark's
// RSS per idle teammate).
import { bundle } from './bundle.mjs';

// Loaded only for what needs them, and large or optional: the TypeScript compiler (JS and TS
// code only), PostgreSQL's driver (a PostgreSQL board), OpenTelemetry (an OTLP endpoint).
await bundle('worker', 'teammate-worker.js', ['typescript', 'pg', 'pg-native', '@opentelemetry/*']);

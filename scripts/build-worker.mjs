// Bundles the teammate thread (dist/worker/teammate-worker.js, compiled by tsc) into
// dist/worker/bundle: one module for what every thread loads, and a chunk for each part it loads
// only when needed (a provider's SDK, execa, the MCP client, each tool). Part of `npm run build`.
//
// Every teammate thread is its own V8 isolate: each compiles and holds the source of every module it
// imports. Unbundled, that is some 300 files (the Anthropic SDK alone is 272); bundled with
// whitespace and syntax minified, an idle teammate holds about 7 MB less (the scale benchmark's
// RSS per idle teammate). Names are kept, so a crash log's stack still names its functions.
//
// The bundle sits two folders below dist/, as the compiled modules do: code that finds a file from
// its own address (the package.json its version is read from) finds the same one.
import fs from 'node:fs';
import { build } from 'esbuild';

const out = new URL('../dist/worker/bundle/', import.meta.url);
fs.rmSync(out, { recursive: true, force: true });
const result = await build({
  entryPoints: [new URL('../dist/worker/teammate-worker.js', import.meta.url).pathname],
  outdir: out.pathname,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  chunkNames: '[name]-[hash]',
  minifyWhitespace: true,
  minifySyntax: true,
  // Loaded only for what needs them, and large or optional: the TypeScript compiler (JS and TS
  // code only), PostgreSQL's driver (a PostgreSQL board), OpenTelemetry (an OTLP endpoint).
  external: ['typescript', 'pg', 'pg-native', '@opentelemetry/*'],
  // Bundled CommonJS packages call require(); in an ES module it has to be made.
  banner: { js: "import { createRequire as __autoteamRequire } from 'node:module'; const require = __autoteamRequire(import.meta.url);" },
  legalComments: 'none',
  logLevel: 'warning',
  metafile: true,
});
// What went into each file and what each imports: tests/agent/worker-bundle.test.ts reads it.
fs.writeFileSync(new URL('../dist/worker/bundle-meta.json', import.meta.url), JSON.stringify(result.metafile));

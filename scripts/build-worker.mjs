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
import path from 'node:path';
import { build } from 'esbuild';

const out = new URL('../dist/worker/bundle/', import.meta.url);
const next = new URL('../dist/worker/bundle.next/', import.meta.url);
const metaFile = new URL('../dist/worker/bundle-meta.json', import.meta.url);
fs.rmSync(next, { recursive: true, force: true });
const result = await build({
  entryPoints: [new URL('../dist/worker/teammate-worker.js', import.meta.url).pathname],
  outdir: next.pathname,
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
// Swapped in under whatever runs from this build already (a REPL whose next thread starts now): the
// chunks first (named by their content, so one of the same name is the same file), the entry last, by
// a rename, so a thread loads the old bundle or the new one, never half. The chunks of the build
// before stay, for threads that started on it and load a chunk later; older ones go.
const named = (meta) => new Set(Object.keys(meta?.outputs ?? {}).map((file) => path.basename(file)));
const before = named(fs.existsSync(metaFile) ? JSON.parse(fs.readFileSync(metaFile, 'utf8')) : null);
const made = named(result.metafile);
fs.mkdirSync(out, { recursive: true });
const ENTRY = 'teammate-worker.js';
for (const name of [...fs.readdirSync(next).filter((file) => file !== ENTRY), ENTRY]) fs.renameSync(new URL(name, next), new URL(name, out));
fs.rmSync(next, { recursive: true, force: true });
for (const name of fs.readdirSync(out)) if (!made.has(name) && !before.has(name)) fs.rmSync(new URL(name, out));
// What went into each file and what each imports, as it now lies in bundle/: tests/agent/worker-bundle.test.ts reads it.
fs.writeFileSync(new URL('bundle-meta.json.tmp', metaFile), JSON.stringify(result.metafile).replaceAll('/bundle.next/', '/bundle/'));
fs.renameSync(new URL('bundle-meta.json.tmp', metaFile), metaFile);

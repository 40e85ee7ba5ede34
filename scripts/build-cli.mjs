// Bundles the command (dist/cli/main.js, compiled by tsc) into dist/cli/bundle/main.js, the file the
// `autoteam` command and `npm start` run. Part of `npm run build`.
//
// Unbundled, a command loads some 500 modules before it does anything: `autoteam tasks` took 0.6 s
// of wall time and 0.7 s of CPU, most of it finding, reading and linking files. Bundled, it reads two
// dozen (docs/ARCHITECTURE.md has the numbers). dist/cli/main.js, unbundled, runs the same command.
import fs from 'node:fs';
import { bundle } from './bundle.mjs';

// Left to node_modules: what is large and loaded only by some commands (the TypeScript compiler,
// PostgreSQL's driver, OpenTelemetry), and the terminal UI (ink and React, with optional imports
// of their own that a bundle would have to resolve), loaded by the REPL only.
const main = await bundle('cli', 'main.js', ['typescript', 'pg', 'pg-native', '@opentelemetry/*', 'ink', 'ink-*', 'react', 'react/*', 'yoga-layout', 'tsx', 'esbuild']);
// An executable, as npm makes an installed package's bin: run through its #! line.
fs.chmodSync(main, 0o755);

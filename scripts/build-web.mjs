// Builds the web board's page (src/web/client) into dist/web/assets: one ES module and one style
// sheet, everything bundled, nothing fetched at run time. Part of `npm run build`.
import fs from 'node:fs';
import { build } from 'esbuild';

const out = new URL('../dist/web/assets/', import.meta.url);
fs.mkdirSync(out, { recursive: true });
await build({
  entryPoints: [new URL('../src/web/client/main.tsx', import.meta.url).pathname],
  outfile: new URL('app.js', out).pathname,
  bundle: true,
  format: 'esm',
  target: 'es2022',
  minify: true,
  jsx: 'automatic',
  jsxImportSource: 'preact',
  legalComments: 'none',
  logLevel: 'warning',
});
fs.copyFileSync(new URL('../src/web/client/app.css', import.meta.url), new URL('app.css', out));

// Bundles one entry compiled by tsc into a folder of its own beside it (`<dir>/bundle/`): the entry
// module, and a chunk for each part it loads only when needed. Used by build-worker.mjs (the
// teammate thread) and build-cli.mjs (the command). Names are kept, so a crash's stack still names
// its functions. Code that finds a file from its own address finds autoteam's folder by walking up
// to its package.json (src/core/own-package.ts), wherever the bundle sits.
import fs from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';

/**
 * Bundles `dist/<dir>/<entry>` into `dist/<dir>/bundle/<entry>`, leaving `external` to be imported
 * from node_modules, and writes esbuild's account of it to `dist/<dir>/bundle-meta.json`.
 *
 * Swapped in under whatever runs from this build already (a REPL whose next thread starts now): the
 * chunks first (named by their content, so one of the same name is the same file), the entry last, by
 * a rename, so a process or thread loads the old bundle or the new one, never half. The chunks of the
 * build before stay, for what started on it and loads a chunk later; older ones go.
 */
export async function bundle(dir, entry, external) {
  const dist = new URL(`../dist/${dir}/`, import.meta.url);
  const out = new URL('bundle/', dist);
  const next = new URL('bundle.next/', dist);
  const metaFile = new URL('bundle-meta.json', dist);
  fs.rmSync(next, { recursive: true, force: true });
  const result = await build({
    entryPoints: [new URL(entry, dist).pathname],
    outdir: next.pathname,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    chunkNames: '[name]-[hash]',
    minifyWhitespace: true,
    minifySyntax: true,
    external,
    // Bundled CommonJS packages call require(); in an ES module it has to be made.
    banner: { js: "import { createRequire as __autoteamRequire } from 'node:module'; const require = __autoteamRequire(import.meta.url);" },
    legalComments: 'none',
    logLevel: 'warning',
    metafile: true,
  });
  const named = (meta) => new Set(Object.keys(meta?.outputs ?? {}).map((file) => path.basename(file)));
  const before = named(fs.existsSync(metaFile) ? JSON.parse(fs.readFileSync(metaFile, 'utf8')) : null);
  const made = named(result.metafile);
  fs.mkdirSync(out, { recursive: true });
  for (const name of [...fs.readdirSync(next).filter((file) => file !== entry), entry]) fs.renameSync(new URL(name, next), new URL(name, out));
  fs.rmSync(next, { recursive: true, force: true });
  for (const name of fs.readdirSync(out)) if (!made.has(name) && !before.has(name)) fs.rmSync(new URL(name, out));
  // What went into each file and what each imports, as it now lies in bundle/ (tests/agent/worker-bundle.test.ts reads the worker's).
  fs.writeFileSync(new URL('bundle-meta.json.tmp', metaFile), JSON.stringify(result.metafile).replaceAll('/bundle.next/', '/bundle/'));
  fs.renameSync(new URL('bundle-meta.json.tmp', metaFile), metaFile);
  return new URL(entry, out);
}

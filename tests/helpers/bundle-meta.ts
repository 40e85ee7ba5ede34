import fs from 'node:fs';
import path from 'node:path';

/** esbuild's account of a bundle (scripts/bundle.mjs writes it beside the bundle). */
export interface Metafile {
  outputs: Record<string, { imports: Array<{ path: string; kind: string; external?: boolean }>; inputs: Record<string, unknown>; entryPoint?: string }>;
}

/** `dist/<dir>/bundle-meta.json`, and its JavaScript outputs. */
export function bundleMeta(repo: string, dir: 'worker' | 'cli'): { meta: Metafile; outputs: Array<[string, Metafile['outputs'][string]]> } {
  const meta = JSON.parse(fs.readFileSync(path.join(repo, 'dist', dir, 'bundle-meta.json'), 'utf8')) as Metafile;
  return { meta, outputs: Object.entries(meta.outputs).filter(([file]) => file.endsWith('.js')) };
}

/** The files loaded as `entry` starts: it and its static imports, transitively. */
export function loadedAtStart(meta: Metafile, entry: string): Set<string> {
  const atStart = new Set<string>();
  const visit = (file: string) => {
    if (atStart.has(file)) return;
    atStart.add(file);
    for (const item of meta.outputs[file]!.imports) if (!item.external && item.kind === 'import-statement') visit(item.path);
  };
  visit(entry);
  return atStart;
}

/** Those of `files` that hold code of package `pkg`. */
export function holding(meta: Metafile, files: Iterable<string>, pkg: string): string[] {
  return [...files].filter((file) => Object.keys(meta.outputs[file]!.inputs).some((input) => input.includes(`node_modules/${pkg}/`)));
}

import fs from 'node:fs';
import path from 'node:path';
import { OWN_PACKAGE } from '../core/own-package.js';

/**
 * The page's files, built by `npm run build` (scripts/build-web.mjs) into dist/web/assets: served
 * from there whether the server runs from dist/, from the CLI's bundle or, in tests, from src/.
 * Nothing is fetched from anywhere else at run time.
 */
const FOLDER = path.join(OWN_PACKAGE.root, 'dist', 'web', 'assets');

const TYPES: Record<string, string> = { js: 'text/javascript; charset=utf-8', css: 'text/css; charset=utf-8', svg: 'image/svg+xml' };

/** A built file by name (`app.js`), or null for any other name. */
export function readAsset(name: string): { body: Buffer; type: string } | null {
  if (!/^[\w-]+\.(js|css|svg)$/.test(name)) return null;
  try {
    return { body: fs.readFileSync(path.join(FOLDER, name)), type: TYPES[name.split('.').pop()!]! };
  } catch {
    return null; // not built
  }
}

/** Whether the page has been built (`npm run build`). */
export function assetsBuilt(): boolean {
  return readAsset('app.js') !== null;
}

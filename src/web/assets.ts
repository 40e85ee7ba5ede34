import fs from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * The page's files, built by `npm run build` (scripts/build-web.mjs) into dist/web/assets: served
 * from there whether the server runs from dist/ or, in tests, from src/. Nothing is fetched from
 * anywhere else at run time.
 */
const FOLDERS = [new URL('./assets/', import.meta.url), new URL('../../dist/web/assets/', import.meta.url)].map((url) => fileURLToPath(url));

const TYPES: Record<string, string> = { js: 'text/javascript; charset=utf-8', css: 'text/css; charset=utf-8', svg: 'image/svg+xml' };

/** A built file by name (`app.js`), or null for any other name. */
export function readAsset(name: string): { body: Buffer; type: string } | null {
  if (!/^[\w-]+\.(js|css|svg)$/.test(name)) return null;
  for (const folder of FOLDERS) {
    try {
      return { body: fs.readFileSync(folder + name), type: TYPES[name.split('.').pop()!]! };
    } catch {
      // not in this folder
    }
  }
  return null;
}

/** Whether the page has been built (`npm run build`). */
export function assetsBuilt(): boolean {
  return readAsset('app.js') !== null;
}

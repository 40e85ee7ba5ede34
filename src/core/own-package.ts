import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * autoteam's own folder — the one holding its package.json — and its version, found by walking up
 * from this module's file. The same folder whether the code runs from src/ (tests), compiled in
 * dist/, or bundled in dist/cli/bundle or dist/worker/bundle, where every module shares one address.
 */
export const OWN_PACKAGE: { root: string; version: string } = (() => {
  const here = fileURLToPath(import.meta.url);
  for (let dir = path.dirname(here); ; ) {
    try {
      const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (manifest.name === 'autoteam') return { root: dir, version: manifest.version ?? '0.0.0' };
    } catch {
      // no package.json here, or not one that reads: go up
    }
    const up = path.dirname(dir);
    if (up === dir) throw new Error(`autoteam's package.json is not in any folder above ${here}`);
    dir = up;
  }
})();

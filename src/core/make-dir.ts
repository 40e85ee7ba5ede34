import fs from 'node:fs';
import path from 'node:path';

/**
 * `mkdir -p`, one folder at a time down from the nearest one that exists. Node 20's own recursive
 * mkdirSync never returns under /proc: each mkdir there fails with ENOENT, which it takes for a
 * missing parent, again and again. This fails at once, with the error of the folder that could not
 * be made.
 */
export function makeDir(dir: string): void {
  const missing: string[] = [];
  const target = path.resolve(dir);
  for (let at = target; !fs.existsSync(at); ) {
    missing.unshift(at);
    const parent = path.dirname(at);
    if (parent === at) break;
    at = parent;
  }
  // A file where the folder should be: mkdir's own EEXIST, naming it.
  if (missing.length === 0 && !fs.statSync(target).isDirectory()) fs.mkdirSync(target);
  for (const folder of missing) {
    try {
      fs.mkdirSync(folder);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || !fs.statSync(folder).isDirectory()) throw error;
    }
  }
}

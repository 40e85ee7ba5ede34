#!/usr/bin/env node
// The `autoteam` command (npx autoteam in a clone, npm link): the built CLI in dist/, or, in a clone
// not installed and built yet, one line saying what to do rather than npx's "autoteam: not found".
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const main = new URL('../dist/cli/bundle/main.js', import.meta.url);
if (!fs.existsSync(main)) {
  console.error(`autoteam: not built yet: run npm ci in ${path.dirname(path.dirname(fileURLToPath(import.meta.url)))} (it installs and builds)`);
  process.exit(2);
}
await import(main.href);

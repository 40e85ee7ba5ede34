// npm's `prepare`: it runs on `npm ci` and `npm install` in a clone, and again whenever npx installs
// this folder for `npx autoteam` (npm links the folder into its cache and prepares it). It builds only
// when the build is missing or older than what it is built from. A rebuild is not free: it takes
// 15–40 s, and rewrites dist/ under any autoteam already running from this clone (tsc writes its
// files in place; only the teammates' bundle is swapped in whole, scripts/build-worker.mjs).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const SOURCES = ['src', 'scripts', 'package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json', 'tsconfig.web.json'];
/** What each step of `npm run build` writes last or alone: the oldest of them dates the build. */
const OUTPUTS = ['dist/cli/main.js', 'dist/web/assets/app.js', 'dist/worker/bundle/teammate-worker.js', 'dist/cli/bundle/main.js'];

function newest(file) {
  const stat = fs.statSync(file, { throwIfNoEntry: false });
  if (!stat) return 0;
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(stat.mtimeMs, ...fs.readdirSync(file).map((name) => newest(path.join(file, name))));
}

// Not installed (npx run in a clone before `npm ci`): there is nothing to build with. Not a failure,
// which would leave npx's cache of the clone half-made for good; the command says what to do instead.
const installed = fs.existsSync(path.join(root, 'node_modules', 'typescript', 'package.json'));
const built = Math.min(...OUTPUTS.map((file) => fs.statSync(path.join(root, file), { throwIfNoEntry: false })?.mtimeMs ?? 0));
const changed = Math.max(...SOURCES.map((file) => newest(path.join(root, file))));
if (!installed) {
  console.error(`autoteam: not built, as its dependencies are not installed: run npm ci in ${root}`);
} else if (built > 0 && built >= changed) {
  console.log('autoteam: dist/ is newer than its sources, so it is not built again (npm run build does)');
} else {
  const build = spawnSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' });
  process.exitCode = build.status ?? 1;
}

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const CLI = path.join(REPO, 'dist', 'cli', 'bundle', 'main.js');

/** The e2e tests run the built CLI; `npm test` builds it first, and these tests never rebuild it. */
export function assertBuilt(): void {
  if (!fs.existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` (npm test builds first)`);
}

/** The child's environment: the offline model, whatever the developer's shell or .env says. */
export function offlineEnv(): NodeJS.ProcessEnv {
  return { ...process.env, ANTHROPIC_API_KEY: '', ANTHROPIC_AUTH_TOKEN: '', ANTHROPIC_BASE_URL: '', FORCE_COLOR: '0' };
}

/**
 * A real headless browser for the web board's tests: Debian's chromium (or CHROMIUM_PATH), driven by
 * playwright-core over its own protocol — never a downloaded browser build. `.ci/run` installs
 * chromium when it is missing.
 */
import fs from 'node:fs';
import { afterEach } from 'vitest';
import { type Browser, chromium } from 'playwright-core';

const CANDIDATES = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];

export const chromiumPath: string | null = CANDIDATES.find((candidate): candidate is string => !!candidate && fs.existsSync(candidate)) ?? null;

/** Browsers launched by a test, closed after it. */
export function useBrowsers(): { launch: () => Promise<Browser> } {
  const open: Browser[] = [];
  afterEach(async () => {
    for (const browser of open.splice(0)) await browser.close().catch(() => undefined);
  });
  return {
    launch: async () => {
      if (!chromiumPath) throw new Error('no chromium: install Debian\'s chromium (apt-get install chromium) or set CHROMIUM_PATH');
      const browser = await chromium.launch({
        executablePath: chromiumPath,
        // Root in a container: no user namespace sandbox for the browser; /dev/shm may be small.
        args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking', '--no-first-run'],
      });
      open.push(browser);
      return browser;
    },
  };
}

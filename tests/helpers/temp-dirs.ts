import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** The folders this test file made with tempDir, removed after its last test (tests/helpers/temp-cleanup.ts). */
const made: string[] = [];

/** A new folder under the system's temp folder, by its real path, removed when the test file ends. */
export function tempDir(prefix: string): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
  made.push(dir);
  return dir;
}

/** Removes every folder tempDir made; one a process left running still writes into is tried a few times. */
export function removeTempDirs(): void {
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
}

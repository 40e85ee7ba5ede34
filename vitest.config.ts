import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { configDefaults, defineConfig } from 'vitest/config';
import LongestFirst from './tests/helpers/longest-first.js';
import { builtWorker, pathWithRealPython, threadModels } from './tests/helpers/test-env.js';

const repo = fileURLToPath(new URL('.', import.meta.url));
const worker = builtWorker(repo);
const models = threadModels(repo, path.join(repo, 'node_modules', '.cache', 'autoteam-tests'));

/** The files that use the run's one PostgreSQL server (tests/helpers/postgres-setup.ts starts it). */
const POSTGRES_FILES = [
  'tests/board/conformance.test.ts',
  'tests/board/pg-claim-plan.test.ts',
  'tests/board/pg-connection-loss.test.ts',
  'tests/board/pg-refresh.test.ts',
  'tests/board/pg-follow.test.ts',
  'tests/e2e/postgres-board.test.ts',
  'tests/e2e/remote-repo-pg.test.ts',
  'tests/board/inbox-size.test.ts',
  'tests/board/task-size.test.ts',
  'tests/events/event-log.test.ts',
  'tests/events/events-cli.test.ts',
  'tests/bench/scale-short-pg.test.ts',
  'tests/board/pg-shared-thread.test.ts',
  'tests/board/pg-write.test.ts',
  'tests/board/complete-then-post.test.ts',
  'tests/board/pg-reconnect-mail.test.ts',
  'tests/board/pg-event-order.test.ts',
  'tests/board/pg-transfer-events.test.ts',
];

/** Whole runs of the CLI (a pipeline, a REPL, a board outage): their own projects, so `npm test` stays short. */
const E2E_FILES = 'tests/e2e/**/*.test.ts';

export default defineConfig({
  test: {
    // Tests wait for events, with ceilings only a hang reaches (HANG_MS, tests/helpers/agent-wait.ts);
    // these are far above a quiet 2-core machine's times, so a machine four times slower, or two
    // more copies of the suite beside this one, makes the run slower, not red.
    testTimeout: 180_000,
    hookTimeout: 180_000,
    // Concurrency tests spawn their own threads and processes; two files at a time keeps a
    // 2-core machine from starving their lock retries.
    maxWorkers: 2,
    // The longest files first, whichever project holds them (tests/helpers/longest-first.ts).
    sequence: { sequencer: LongestFirst },
    // Every temp folder a test file made with tests/helpers/temp-dirs.ts is removed after the file.
    setupFiles: ['tests/helpers/temp-cleanup.ts'],
    env: { PATH: pathWithRealPython(), ...models, ...(worker ? { AUTOTEAM_TEST_WORKER: worker } : {}) },
    // `npm test` runs `main` and `postgres`; `npm run test:e2e` the end-to-end files, each of which
    // starts the CLI for whole runs; `npm run test:all` (what CI runs) all four in one run.
    projects: [
      { extends: true, test: { name: 'main', include: ['tests/**/*.test.ts', 'tests/**/*.test.tsx'], exclude: [...configDefaults.exclude, ...POSTGRES_FILES, E2E_FILES] } },
      // A project of its own so that its globalSetup runs only when one of these files does.
      { extends: true, test: { name: 'postgres', include: POSTGRES_FILES, exclude: [...configDefaults.exclude, E2E_FILES], globalSetup: ['tests/helpers/postgres-setup.ts'] } },
      { extends: true, test: { name: 'e2e', include: [E2E_FILES], exclude: [...configDefaults.exclude, ...POSTGRES_FILES] } },
      { extends: true, test: { name: 'e2e-postgres', include: POSTGRES_FILES.filter((file) => file.startsWith('tests/e2e/')), globalSetup: ['tests/helpers/postgres-setup.ts'] } },
    ],
  },
});

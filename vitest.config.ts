import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts', 'tests/**/*.test.tsx'],
    testTimeout: 60_000,
    hookTimeout: 30_000,
    // Concurrency tests spawn their own threads and processes; two files at a time keeps a
    // 2-core machine from starving their lock retries.
    maxWorkers: 2,
  },
});

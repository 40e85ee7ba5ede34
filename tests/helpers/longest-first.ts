import path from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Seconds the slowest files took in one run of the suite (relative sizes are what count): the order
 * for a checkout that has no results cache yet, such as CI's fresh clone. A file not listed counts
 * as short.
 */
const SLOW_FILES: Readonly<Record<string, number>> = {
  'tests/e2e/postgres-board.test.ts': 270,
  'tests/board/conformance.test.ts': 140,
  'tests/events/events-cli.test.ts': 100,
  'tests/e2e/project-config.test.ts': 70,
  'tests/events/event-log.test.ts': 64,
  'tests/board/task-size.test.ts': 51,
  'tests/e2e/run-offline.test.ts': 48,
  'tests/e2e/worktrees.test.ts': 37,
  'tests/stages/valves.test.ts': 36,
  'tests/board/formats.test.ts': 34,
  'tests/lead/session.test.ts': 33,
  'tests/e2e/record-replay.test.ts': 30,
  'tests/e2e/repl-line.test.ts': 30,
  'tests/e2e/cli-dir.test.ts': 29,
  'tests/e2e/sandbox-cli.test.ts': 29,
  'tests/e2e/run-anthropic.test.ts': 29,
  'tests/board/claim-race.test.ts': 28,
  'tests/lead/resume.test.ts': 28,
  'tests/e2e/repl-tmux.test.ts': 28,
  'tests/stages/offline-repertoire.test.ts': 25,
  'tests/stages/cancel-retry.test.ts': 23,
  'tests/telemetry/pipeline-trace.test.ts': 21,
};

/**
 * Longest file first, across both projects. Vitest's own order runs the projects one after the
 * other, so the PostgreSQL files — the longest of all — started last and made the run's tail; here
 * they start first and the short files fill in around them. A file's last duration in the results
 * cache wins over the list above.
 */
export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const estimate = (spec: TestSpecification): number => {
      const file = path.relative(root, spec.moduleId);
      const cached = this.ctx.cache.getFileTestResults(`${spec.project.name}:${file}`)?.duration;
      return cached !== undefined ? cached / 1000 : (SLOW_FILES[file] ?? 0);
    };
    const base = await super.sort(files);
    const rank = new Map(base.map((spec, index) => [spec, index]));
    return [...base].sort((a, b) => estimate(b) - estimate(a) || rank.get(a)! - rank.get(b)!);
  }
}

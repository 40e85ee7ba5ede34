/**
 * A teammate in a child process of its own:
 * `node --import tsx tests/helpers/agent-child.ts '<AgentChildConfig json>'`.
 * Every TeammateEvent is printed as one JSON line on stdout; SIGTERM stops it gracefully.
 */
import { guardProcess } from '../../src/core/agent/crash-log.js';
import { Teammate } from '../../src/core/agent/teammate.js';
import { TaskBoard } from '../../src/core/board/task-board.js';
import type { TeammateSettings } from '../../src/core/agent/settings.js';
import { Wake } from '../../src/core/agent/wake.js';
import { createModel, type ModelSpec } from '../../src/core/model/factory.js';

export interface AgentChildConfig {
  name: string;
  role: string;
  rootDir: string;
  model: ModelSpec;
  settings: Partial<TeammateSettings>;
}

const config = JSON.parse(process.argv[2]!) as AgentChildConfig;
const stop = new AbortController();
process.once('SIGTERM', () => stop.abort(new Error('SIGTERM received')));
const teammate = new Teammate({
  name: config.name,
  role: config.role,
  rootDir: config.rootDir,
  model: await createModel(config.model),
  wake: new Wake(),
  signal: stop.signal,
  settings: config.settings,
  emit: (event) => process.stdout.write(`${JSON.stringify(event)}\n`),
});
// As `autoteam worker` does: a crash leaves its log and hands the task back.
const guard = guardProcess({
  rootDir: config.rootDir,
  name: config.name,
  role: config.role,
  handBack: () => new TaskBoard(config.rootDir).reclaimAllFrom(config.name, `owner ${config.name} died`),
});
await teammate.run().catch((error: unknown) => guard.crashed(error));
guard.dispose();

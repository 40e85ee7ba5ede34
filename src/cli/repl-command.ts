import type { TeammateSettings } from '../core/agent/settings.js';
import { openBoard } from '../core/board/board.js';
import { coveredOn } from '../core/board/team-registry.js';
import { LeadSession } from '../core/lead/session.js';
import { type RoleCount, startingTeam } from '../core/lead/team-size.js';
import { modelSpecs, type ProjectConfig } from '../core/config/project-config.js';
import type { ModelOverrides } from '../core/model/config.js';
import { serveWeb } from './web-command.js';
import { sayConfigWarnings } from './board-options.js';
import { unguardOutput } from '../frontend/printable.js';

export interface ReplOptions {
  dir: string;
  auto: boolean;
  team: boolean;
  settings: TeammateSettings;
  repo?: string | false;
  /** A postgres:// board (absent: the file board in `dir`). */
  board?: string;
  /** --provider / --model. */
  model?: ModelOverrides;
  /** autoteam.config.json of the board folder. */
  project: ProjectConfig;
  /** `--web[=PORT]`: the web board served beside the REPL. */
  web?: { port: number };
  /** `--analysts N`, `--engineers N`, `--reviewers N`. */
  counts?: RoleCount[];
}

/** `autoteam` with no subcommand: the ink app on a terminal, line mode on pipes. */
export async function startRepl(options: ReplOptions): Promise<void> {
  const sized = (say: (line: string) => void, covered?: (role: string) => boolean) => startingTeam(options.project, options.counts ?? [], { strict: false, say, ...(covered ? { covered } : {}) });
  // Sized before anything opens: a bad count is one line, with nothing left behind.
  const team = options.team ? sized(() => undefined) : [];
  const board = await openBoard(options.board ?? options.dir, options.dir, { maxInboxBytes: options.settings.maxInboxBytes });
  // A role the sizes leave empty is said once the board is open: a live worker of it there works its tasks.
  const covered = coveredOn(board.registry);
  if (options.team) sized((line) => console.error(`autoteam: ${line}`), covered);
  const { project } = options;
  sayConfigWarnings(project, options.team ? team : undefined, covered);
  const { model, models } = modelSpecs(process.env, project, options.model ?? {});
  const session = new LeadSession({
    rootDir: options.dir,
    model,
    models,
    settings: options.settings,
    auto: options.auto,
    board,
    repl: true,
    ...(options.repo !== undefined ? { repo: options.repo } : {}),
    ...(project.leadTools ? { leadTools: project.leadTools } : {}),
    ...(project.autoMerge ? { autoMerge: true } : {}),
  });
  // Its address goes to stderr before the REPL takes the terminal.
  const web = options.web ? await serveWeb(session, { port: options.web.port, flag: '--web' }, (line) => console.error(line)).catch(async (error: unknown) => {
    await board.close();
    throw error;
  }) : null;
  try {
    if (process.stdin.isTTY && process.stdout.isTTY) {
      // ink and chalk decide at import time that an environment with CI (or CONTINUOUS_INTEGRATION)
      // set is no terminal: ink renders only the last frame, on exit, and chalk drops colour — the
      // cursor ink draws with it too. A person at a terminal is interactive whatever CI says, so
      // neither is left for them to read (not even as CI=false, which chalk counts as set).
      delete process.env.CI;
      delete process.env.CONTINUOUS_INTEGRATION;
      const { runInk } = await import('../ui/run-ink.js');
      // ink draws with control sequences of its own: it shows outside text through `printable` itself.
      unguardOutput();
      await runInk(session, { team });
    } else {
      const { runLineRepl } = await import('./line-repl.js');
      process.exitCode = await runLineRepl(session, { team });
    }
  } finally {
    await web?.close('the REPL quit');
    await board.close();
  }
}

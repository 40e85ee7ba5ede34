import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { TeammateSettings } from '../core/agent/settings.js';
import { openBoard } from '../core/board/board.js';
import { modelSpecs, type ProjectConfig } from '../core/config/project-config.js';
import { BoardLead } from '../core/lead/board-lead.js';
import type { LeadControls } from '../core/lead/lead-api.js';
import { DEFAULT_TEAM, LeadSession } from '../core/lead/session.js';
import type { ModelOverrides } from '../core/model/config.js';
import { StageRegistry } from '../core/stages/stage-registry.js';
import { boardServer } from '../mcp-server/board-server.js';

export interface McpServeOptions {
  dir: string;
  /** A postgres:// board (absent: the file board in `dir`). */
  board?: string;
  /** Start the project's team (or the default one) in this process, as its lead. */
  team: boolean;
  /** With `team`: a simulated user answers the analyst (otherwise the MCP client does). */
  auto: boolean;
  settings: TeammateSettings;
  project: ProjectConfig;
  model?: ModelOverrides;
  repo?: string | false;
}

/**
 * `autoteam mcp serve`: the board as an MCP server over stdio, for another agent or an editor
 * (Claude Code, Codex, Cursor) to post requirements to, follow and answer. It acts through a
 * BoardLead — beside a lead or workers in other processes, taking no lease — or, with `--team`,
 * through the lead session it starts with the team in this process. stdout is the protocol's:
 * everything else goes to stderr. It ends when the client closes stdin, or on SIGINT/SIGTERM.
 */
export async function serveMcp(options: McpServeOptions): Promise<number> {
  const { project, settings } = options;
  for (const warning of project.warnings) console.error(`autoteam: ${project.file}: ${warning}`);
  const stages = StageRegistry.from(project.stages);
  const board = await openBoard(options.board ?? options.dir, options.dir, { maxInboxBytes: settings.maxInboxBytes });
  let controls: LeadControls;
  let stop: () => Promise<void>;
  try {
    if (options.team) {
      const { model, models } = modelSpecs(process.env, project, options.model ?? {});
      const session = new LeadSession({ rootDir: options.dir, model, models, settings, auto: options.auto, board, ...(options.repo !== undefined ? { repo: options.repo } : {}), ...(project.leadTools ? { leadTools: project.leadTools } : {}) });
      await session.start(project.team ?? DEFAULT_TEAM);
      controls = session;
      stop = async () => {
        await session.close(3_000);
      };
    } else {
      const lead = new BoardLead(board, { stages, maxRevisions: settings.runtime.maxRevisions, ...(options.repo !== undefined ? { repo: options.repo } : {}) });
      await lead.start();
      controls = lead;
      stop = () => lead.close();
    }
  } catch (error) {
    await board.close();
    throw error;
  }
  const { server, close } = boardServer({ controls, stages, dir: options.dir, ...(options.board ? { board: options.board } : {}) });
  const ended = new Promise<void>((resolve) => {
    server.server.onclose = resolve;
    process.stdin.once('end', resolve);
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  try {
    await server.connect(new StdioServerTransport());
    await ended;
  } finally {
    close();
    await server.close().catch(() => undefined);
    await stop();
    await board.close();
  }
  return 0;
}

import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { OWN_PACKAGE } from '../core/own-package.js';
import { type BoardToolsOptions, registerBoardTools } from './board-tools.js';
import { TaskResources } from './task-resources.js';

const INSTRUCTIONS = [
  'An autoteam board: a team of agents (analyst, engineer, reviewer) works each posted requirement as a pipeline.',
  'post_requirement starts one (the team must be running); pipeline_status {"pipeline": N, "wait_seconds": 300} follows it;',
  "list_questions / answer_question answer the team's questions; diff_pipeline and merge_pipeline take an approved pipeline's",
  'branch on a repository. Each task is the resource autoteam://task/<id>; subscribe to hear it change.',
].join(' ');

/**
 * The MCP server of a board: its tools and task resources over a `LeadControls` — a BoardLead (the
 * board acted on from outside the team) or, with `--team`, the lead session this process runs.
 * `close()` stops following the board.
 */
export function boardServer(options: BoardToolsOptions): { server: McpServer; close(): void } {
  const server = new McpServer({ name: 'autoteam', version: OWN_PACKAGE.version }, { instructions: INSTRUCTIONS });
  registerBoardTools(server, options);
  const resources = new TaskResources(server, options.controls);
  resources.register();
  return { server, close: () => resources.close() };
}

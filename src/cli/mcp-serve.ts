import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { TeammateSettings } from '../core/agent/settings.js';
import { coveredOn } from '../core/board/team-registry.js';
import { openBoard } from '../core/board/board.js';
import { BoardBusyError } from '../core/board/liveness.js';
import { AutoteamError } from '../core/errors.js';
import { modelSpecs, type ProjectConfig } from '../core/config/project-config.js';
import { BoardLead } from '../core/lead/board-lead.js';
import type { LeadControls } from '../core/lead/lead-api.js';
import { LeadSession } from '../core/lead/session.js';
import { type RoleCount, startingTeam } from '../core/lead/team-size.js';
import type { ModelOverrides } from '../core/model/config.js';
import { StageRegistry } from '../core/stages/stage-registry.js';
import { boardServer } from '../mcp-server/board-server.js';
import { INVALID_REQUEST, type SessionServer, startMcpHttp } from '../mcp-server/http-server.js';
import { isLoopback } from '../web/guard.js';
import { sayConfigWarnings } from './board-options.js';

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
  /** Serve over streamable HTTP at /mcp (port 0 picks a free one) instead of stdio. */
  http?: { host: string; port: number };
  /** With `team`: `--analysts N`, `--engineers N`, `--reviewers N`. */
  counts?: RoleCount[];
}

/**
 * `autoteam mcp serve`: the board as an MCP server over stdio, or with `--http` over streamable
 * HTTP, for another agent or an editor (Claude Code, Codex, Cursor) to post requirements to, follow
 * and answer. It acts through a BoardLead — beside a lead or workers in other processes, taking no
 * lease — or, with `--team`, through the lead session it starts with the team in this process. On
 * stdio, stdout is the protocol's: everything else goes to stderr; it ends when the client closes
 * stdin. Either way it ends on SIGINT/SIGTERM, having closed every session, the team and the board.
 */
export async function serveMcp(options: McpServeOptions): Promise<number> {
  const { project, settings } = options;
  sayConfigWarnings(project);
  const stages = StageRegistry.from(project.stages);
  const board = await openBoard(options.board ?? options.dir, options.dir, { maxInboxBytes: settings.maxInboxBytes });
  let controls: LeadControls;
  let stop: () => Promise<void>;
  try {
    if (options.team) {
      const { model, models } = modelSpecs(process.env, project, options.model ?? {});
      const session = new LeadSession({ rootDir: options.dir, model, models, settings, auto: options.auto, board, ...(options.repo !== undefined ? { repo: options.repo } : {}), ...(project.leadTools ? { leadTools: project.leadTools } : {}), ...(project.autoMerge ? { autoMerge: true } : {}) });
      await session.start(startingTeam(project, options.counts ?? [], { strict: false, say: (line) => console.error(`autoteam: ${line}`), covered: coveredOn(board.registry) }));
      controls = session;
      stop = async () => {
        await session.close(3_000);
      };
    } else {
      const lead = new BoardLead(board, { stages, maxRevisions: settings.runtime.maxRevisions, ...(options.repo !== undefined ? { repo: options.repo } : {}), ...(settings.repository ? { repository: settings.repository } : {}) });
      await lead.start();
      controls = lead;
      stop = () => lead.close();
    }
  } catch (error) {
    await board.close();
    // Its team runs already: served without --team, the tools work through the lead that runs it.
    if (error instanceof BoardBusyError) throw new AutoteamError(`${error.message}; or serve it without --team (autoteam mcp serve): the tools then work through that lead's team`, error.code);
    throw error;
  }
  const serverOptions = { controls, stages, dir: options.dir, ...(options.board ? { board: options.board } : {}), ...(options.repo === false ? { folders: true } : {}) };
  try {
    if (options.http) await serveHttp(options.http, () => boardServer(serverOptions));
    else await serveStdio(boardServer(serverOptions));
  } finally {
    await stop();
    await board.close();
  }
  return 0;
}

/** Serves one client on stdin/stdout until it closes stdin (or SIGINT/SIGTERM). */
async function serveStdio({ server, connect, close }: SessionServer): Promise<void> {
  const ended = new Promise<void>((resolve) => {
    server.server.onclose = resolve;
    process.stdin.once('end', resolve);
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  const transport = new StdioServerTransport();
  // A line that is not a JSON-RPC message gets JSON-RPC's answer (its id unknown: null) rather than
  // silence; the SDK reads on after it.
  transport.onerror = (error) => {
    const parse = error instanceof SyntaxError;
    if (!parse && error.name !== 'ZodError') return;
    const reply = { jsonrpc: '2.0', id: null, error: parse ? { code: -32700, message: `Parse error: ${error.message}` } : { code: -32600, message: INVALID_REQUEST } };
    void transport.send(reply as unknown as Parameters<typeof transport.send>[0]);
  };
  try {
    await connect(transport);
    await ended;
  } finally {
    close();
    await server.close().catch(() => undefined);
  }
}

/**
 * Serves clients over streamable HTTP until SIGINT/SIGTERM (stdin is not the protocol's here: a
 * server started with it closed, in the background, keeps serving). The first line printed is the
 * endpoint, the second the token and how a client sends it.
 */
async function serveHttp(http: { host: string; port: number }, open: () => SessionServer): Promise<void> {
  const say = (line: string) => console.log(line);
  const endpoint = await startMcpHttp({ open, host: http.host, port: http.port });
  const stopped = new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  try {
    say(`autoteam mcp: ${endpoint.url}`);
    say(`autoteam mcp: token ${endpoint.token} — clients send it as the header "Authorization: Bearer <token>"; Claude Code: claude mcp add --transport http autoteam ${endpoint.url} --header "Authorization: Bearer ${endpoint.token}"`);
    if (!isLoopback(http.host)) {
      say(`autoteam mcp: warning: listening on ${http.host}, reachable from other machines; anyone with the token can act on the board. An SSH tunnel (ssh -L ${endpoint.port}:127.0.0.1:${endpoint.port} <this machine>) keeps it on 127.0.0.1.`);
    }
    await stopped;
  } finally {
    await endpoint.close();
  }
}

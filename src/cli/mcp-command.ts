import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { loadTeammateSettings } from '../core/agent/settings.js';
import { loadProjectConfig } from '../core/config/project-config.js';
import { hiddenStartDir, type SandboxPolicy } from '../core/exec/sandbox.js';
import { scratchDir } from '../core/exec/scratch.js';
import { describeServer, type McpServerSpec } from '../core/mcp/config.js';
import { StageRegistry } from '../core/stages/stage-registry.js';
import { boardDir, boardOption, boardUrl, dirOption, inherited, UsageError } from './board-options.js';
import { webPort } from './web-command.js';
import { teamSizeOptions } from './team-options.js';
import { roleCounts } from '../core/lead/team-size.js';
import type { TeammateSettings } from '../core/agent/settings.js';
import type { ProjectConfig } from '../core/config/project-config.js';
import type { ModelOverrides } from '../core/model/config.js';

export interface McpListOptions {
  dir: string;
  /** Only the servers offered to this role, and its tools. */
  role?: string;
  sandbox?: string;
  allowNetwork?: string;
  env?: NodeJS.ProcessEnv;
  print?: (line: string) => void;
}

/**
 * `autoteam mcp list`: every server of autoteam.config.json started as a teammate would start it
 * (its sandbox, its environment), whether it starts, and the tools each role it is offered to gets
 * (`mcp__<server>__<tool>`, the allow-list applied). Exit 1 when a server does not start.
 */
export async function listMcpServers(options: McpListOptions): Promise<number> {
  const print = options.print ?? ((line: string) => console.log(line));
  const env = options.env ?? process.env;
  const project = loadProjectConfig(options.dir, env);
  const stages = StageRegistry.from(project.stages);
  if (options.role !== undefined) stages.checkRole(options.role);
  const policy = loadTeammateSettings({ ...project.limitsEnv, ...env }, { sandbox: options.sandbox, allowNetwork: options.allowNetwork }, stages).sandbox;
  const all = Object.entries(project.mcpServers ?? {});
  const servers = options.role === undefined ? all : all.filter(([, spec]) => spec.roles.includes(options.role!));
  if (servers.length === 0) {
    const none = project.file ? `no MCP servers in ${project.file} (mcpServers)` : `no MCP servers: there is no ${path.join(options.dir, 'autoteam.config.json')} (give them in its mcpServers)`;
    print(all.length === 0 ? none : `no MCP server is offered to ${options.role}`);
    return 0;
  }
  let failed = 0;
  for (const [name, spec] of servers) {
    if (!(await describeOne(name, spec, { ...options, env, print, stages, policy }))) failed++;
  }
  return failed ? 1 : 0;
}

async function describeOne(
  name: string,
  spec: McpServerSpec,
  context: McpListOptions & { env: NodeJS.ProcessEnv; print: (line: string) => void; stages: StageRegistry; policy: SandboxPolicy },
): Promise<boolean> {
  const { print, stages, policy } = context;
  print(`${name} (${describeServer(spec)})`);
  const where = spec.stages ? `stages: ${spec.stages.join(', ')}` : 'every stage of the role, and general tasks';
  print(`  offered to: ${spec.roles.length ? `${spec.roles.join(', ')} (${where})` : 'no role (add "roles")'}`);
  const offeredStages = spec.stages ?? [...stages.all().filter((stage) => spec.roles.includes(stage.role) || spec.roles.includes('any')).map((stage) => stage.stage), 'general'];
  const network = policy.network.includes('*') || offeredStages.some((stage) => policy.network.includes(stage));
  const folder = scratchDir('mcp');
  // The MCP SDK is loaded by the commands that speak MCP only: every other command starts without it.
  const [{ McpConnection, McpUnavailableError }, { mcpToolName, openServer, serverSandbox }] = await Promise.all([import('../core/mcp/connection.js'), import('../core/mcp/toolbox.js')]);
  const connection = new McpConnection({
    name,
    timeoutMs: spec.timeoutMs,
    startTimeoutMs: spec.startTimeoutMs,
    open: () => openServer(name, spec, { env: context.env, sandbox: (own) => serverSandbox({ folder, hidden: [context.dir, ...hiddenStartDir()], network, policy, own }) }),
  });
  try {
    const tools = await connection.tools();
    print(`  starts: yes, ${tools.length} tool${tools.length === 1 ? '' : 's'}${spec.transport === 'stdio' ? ` (sandbox: ${policy.mode === 'off' ? 'off' : 'the role\'s'}, network ${network ? 'on' : 'off'})` : ''}`);
    const offered = spec.tools ? tools.filter((tool) => spec.tools!.includes(tool.name)) : tools;
    const names = offered.map((tool) => mcpToolName(name, tool.name)).join(', ') || '(none)';
    for (const role of context.role !== undefined ? [context.role] : spec.roles) print(`  ${role}: ${names}`);
    const missing = (spec.tools ?? []).filter((tool) => !tools.some((listed) => listed.name === tool));
    if (missing.length) print(`  warning: mcpServers.${name}.tools names what the server does not have: ${missing.join(', ')}`);
    return true;
  } catch (error) {
    print(`  starts: no — ${error instanceof McpUnavailableError ? error.reason : (error as Error).message}`);
    return false;
  } finally {
    await connection.close();
    fs.rmSync(folder, { recursive: true, force: true });
  }
}

/** What `mcp serve` shares with the other commands that run a team (main.ts has them). */
export interface TeamCommandHelpers {
  settingsOptions(command: Command): Command;
  repoOptions(command: Command): Command;
  withProject(options: Record<string, unknown>, dir: string): { project: ProjectConfig; settings: TeammateSettings };
  modelChoice(options: Record<string, unknown>): { model: ModelOverrides };
  repoChoice(options: Record<string, unknown>): { repo?: string | false };
}

/** `autoteam mcp …`: the MCP servers teammates use (list), and the board as an MCP server (serve). */
export function registerMcpCommand(program: Command, helpers: TeamCommandHelpers): void {
  const mcp = program.command('mcp').description('MCP: the servers teammates use (list), and this board as a server for other agents (serve)');
  mcp
    .command('list')
    .description('start each MCP server of autoteam.config.json as a teammate would, and print whether it starts and its tools per role')
    .option('--role <role>', 'only the servers offered to this role, and its tools')
    .option('--sandbox <mode>', 'auto (bubblewrap when it works), required, off (env AUTOTEAM_SANDBOX)')
    .option('--allow-network <stages>', "let servers of these stages use the network: 'all', or a comma list of stages (env AUTOTEAM_ALLOW_NETWORK)")
    .addOption(dirOption())
    .action(async (options: Record<string, unknown>, command: Command) => {
      const given = inherited(command, 'dir');
      const dir = path.resolve(given ?? process.cwd());
      if (!fs.statSync(dir, { throwIfNoEntry: false })?.isDirectory()) throw new UsageError(`--dir: ${dir} is not a folder`);
      process.exitCode = await listMcpServers({
        dir,
        ...(typeof options.role === 'string' ? { role: options.role } : {}),
        ...(typeof options.sandbox === 'string' ? { sandbox: options.sandbox } : {}),
        ...(typeof options.allowNetwork === 'string' ? { allowNetwork: options.allowNetwork } : {}),
      });
    });
  const serve = helpers.settingsOptions(
    mcp
      .command('serve')
      .description('serve this board over MCP (stdio, or --http): post requirements, follow pipelines, answer the team (for Claude Code, Codex, Cursor)')
      .option('--http <port>', 'serve over streamable HTTP at /mcp on this port instead of stdio (0 picks a free one); clients send the printed token as Authorization: Bearer')
      .option('--host <address>', 'with --http: the address to listen on; anything but 127.0.0.1/localhost is reachable from other machines (default 127.0.0.1)')
      .option('--team', "start the project's team (or the default one) in this process, as the board's lead")
      .option('--auto', 'with --team: a simulated user answers the analyst (otherwise the MCP client does)')
      .addOption(dirOption())
      .addOption(boardOption()),
  );
  teamSizeOptions(helpers.repoOptions(serve)).action(async (options: Record<string, unknown>, command: Command) => {
    const http = httpChoice(options);
    const dir = boardDir(command);
    const url = boardUrl(command);
    const counts = roleCounts(options);
    if (counts.length && options.team !== true) throw new UsageError(`${counts[0]!.flag} sizes the team that --team starts: give --team too`);
    if (options.auto === true && options.team !== true) throw new UsageError('--auto answers the questions of the team that --team starts: give --team too (without it, the team is elsewhere and its lead answers)');
    const { serveMcp } = await import('./mcp-serve.js');
    process.exitCode = await serveMcp({
      counts,
      ...(http ? { http } : {}),
      dir,
      team: options.team === true,
      auto: options.auto === true,
      ...(url ? { board: url } : {}),
      ...helpers.withProject(options, dir),
      ...helpers.modelChoice(options),
      ...helpers.repoChoice(options),
    });
  });
}

/** `--http <port> [--host <address>]`, or undefined for stdio. */
function httpChoice(options: Record<string, unknown>): { host: string; port: number } | undefined {
  if (options.http === undefined) {
    if (options.host !== undefined) throw new UsageError('--host goes with --http <port> (over stdio there is no address)');
    return undefined;
  }
  const host = options.host === undefined ? '127.0.0.1' : String(options.host).trim();
  if (!host) throw new UsageError('--host needs an address, e.g. 127.0.0.1');
  return { host, port: webPort(options.http, '--http') };
}

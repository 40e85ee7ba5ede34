import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { loadTeammateSettings } from '../core/agent/settings.js';
import { loadProjectConfig } from '../core/config/project-config.js';
import { hiddenStartDir } from '../core/exec/sandbox.js';
import { scratchDir } from '../core/exec/scratch.js';
import { describeServer, type McpServerSpec } from '../core/mcp/config.js';
import { McpConnection, McpUnavailableError } from '../core/mcp/connection.js';
import { mcpToolName, openServer, serverSandbox } from '../core/mcp/toolbox.js';
import { StageRegistry } from '../core/stages/stage-registry.js';
import { dirOption, UsageError } from './board-options.js';

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
    print(all.length === 0 ? `no MCP servers in ${project.file ?? path.join(options.dir, 'autoteam.config.json')} (mcpServers)` : `no MCP server is offered to ${options.role}`);
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
  context: McpListOptions & { env: NodeJS.ProcessEnv; print: (line: string) => void; stages: StageRegistry; policy: ReturnType<typeof loadTeammateSettings>['sandbox'] },
): Promise<boolean> {
  const { print, stages, policy } = context;
  print(`${name} (${describeServer(spec)})`);
  const where = spec.stages ? `stages: ${spec.stages.join(', ')}` : 'every stage of the role, and general tasks';
  print(`  offered to: ${spec.roles.length ? `${spec.roles.join(', ')} (${where})` : 'no role (add "roles")'}`);
  const offeredStages = spec.stages ?? [...stages.all().filter((stage) => spec.roles.includes(stage.role) || spec.roles.includes('any')).map((stage) => stage.stage), 'general'];
  const network = policy.network.includes('*') || offeredStages.some((stage) => policy.network.includes(stage));
  const folder = scratchDir('mcp');
  const connection = new McpConnection({
    name,
    timeoutMs: spec.timeoutMs,
    startTimeoutMs: spec.startTimeoutMs,
    open: () => openServer(name, spec, { env: context.env, sandbox: () => serverSandbox({ folder, hidden: [context.dir, ...hiddenStartDir()], network, policy }) }),
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

/** `autoteam mcp …`: the MCP servers teammates use. */
export function registerMcpCommand(program: Command): void {
  const mcp = program.command('mcp').description('MCP servers: the ones teammates use (list)');
  mcp
    .command('list')
    .description('start each MCP server of autoteam.config.json as a teammate would, and print whether it starts and its tools per role')
    .option('--role <role>', 'only the servers offered to this role, and its tools')
    .option('--sandbox <mode>', 'auto (bubblewrap when it works), required, off (env AUTOTEAM_SANDBOX)')
    .option('--allow-network <stages>', "let servers of these stages use the network: 'all', or a comma list of stages (env AUTOTEAM_ALLOW_NETWORK)")
    .addOption(dirOption())
    .action(async (options: Record<string, unknown>, command: Command) => {
      const given = (options.dir as string | undefined) ?? (command.parent?.parent?.opts().dir as string | undefined);
      const dir = path.resolve(given ?? process.cwd());
      if (!fs.statSync(dir, { throwIfNoEntry: false })?.isDirectory()) throw new UsageError(`--dir: ${dir} is not a folder`);
      process.exitCode = await listMcpServers({
        dir,
        ...(typeof options.role === 'string' ? { role: options.role } : {}),
        ...(typeof options.sandbox === 'string' ? { sandbox: options.sandbox } : {}),
        ...(typeof options.allowNetwork === 'string' ? { allowNetwork: options.allowNetwork } : {}),
      });
    });
}

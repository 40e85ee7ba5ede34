import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { z } from 'zod';
import type { Task } from '../board/schemas.js';
import type { EventInput } from '../events/schema.js';
import { type Containment, containment, Sandbox, type SandboxPolicy } from '../exec/sandbox.js';
import type { ToolDefinition } from '../tools/tool.js';
import { secretValues } from '../trace/redact.js';
import { type McpServerSpec, offeredTo } from './config.js';
import { McpConnection, type McpServerState, type McpToolInfo, type Opened } from './connection.js';
import { expandServer, referencedVariables } from './expand.js';
import { SandboxedStdioTransport } from './stdio-transport.js';
import { localGit } from '../stages/workspace.js';

/** The longest tool name every provider takes (OpenAI's limit; Anthropic's is longer). */
const MAX_TOOL_NAME = 64;

/** What an MCP tool's arguments must be before the server checks them against its own schema. */
const ARGUMENTS = z.preprocess((value) => value ?? {}, z.record(z.string(), z.unknown()));

/**
 * The name the model knows a server's tool by: `mcp__<server>__<tool>`, as Claude Code names them,
 * with characters a provider refuses made `_`, and a long name cut and marked with a short hash of
 * the whole (so two long names stay apart).
 */
export function mcpToolName(server: string, tool: string, hashed = false): string {
  const name = `mcp__${server}__${tool.replace(/[^A-Za-z0-9_-]/g, '_')}`;
  if (name.length <= MAX_TOOL_NAME && !hashed) return name;
  const hash = createHash('sha256').update(tool).digest('hex').slice(0, 8);
  return `${name.slice(0, MAX_TOOL_NAME - 9)}_${hash}`;
}

/** Where a server is started: the sandbox around its own folder, and the environment its `${VAR}`s come from. */
export interface ServerPlace {
  /** `own`: the server's own folders (its package, the node_modules it loads from), read-only inside. */
  sandbox: (own: readonly string[]) => Sandbox;
  env: NodeJS.ProcessEnv;
}

/**
 * A fresh transport for one start of `name`: its references expanded from `place.env` (a ConfigError
 * naming the field when one is not set), a stdio server wrapped in the sandbox, an http server
 * reached from this process with its headers. What is secret of it is kept for redaction.
 */
export function openServer(name: string, spec: McpServerSpec, place: ServerPlace): Opened {
  const launch = expandServer(name, spec, place.env);
  const fields = spec.transport === 'stdio' ? [spec.command, ...spec.args, ...Object.values(spec.env)] : [spec.url, ...Object.values(spec.headers)];
  const referenced = Object.fromEntries(fields.flatMap((field) => referencedVariables(field)).map((variable) => [variable, place.env[variable]]));
  const secrets = new Set(secretValues(referenced));
  if (launch.transport === 'stdio') {
    for (const value of secretValues(launch.env)) secrets.add(value);
    const kept = longestFirst(secrets);
    const transport = new SandboxedStdioTransport({ command: launch.command, args: launch.args, env: launch.env, sandbox: place.sandbox(ownFolders(launch.command, launch.args)), secrets: kept });
    return { transport, describeExit: () => transport.describeExit(), secrets: kept };
  }
  // A header's value is a key more often than not (Authorization, X-Api-Key).
  for (const value of Object.values(launch.headers)) if (value.length >= 8) secrets.add(value);
  const transport = new StreamableHTTPClientTransport(launch.url, { requestInit: { headers: launch.headers } });
  return { transport, secrets: longestFirst(secrets) };
}

/** Redaction replaces a value that holds another one whole. */
function longestFirst(values: Iterable<string>): string[] {
  return [...values].sort((a, b) => b.length - a.length);
}

/**
 * The sandbox a server of a teammate runs in: the teammate's profile (the system read-only, the
 * home directory, the board, the start folder and the repository hidden, the limits, a pids
 * cgroup) around the server's own writable folder, the network as the teammate's stages have it,
 * and nothing passed through of the person's environment.
 */
export function serverSandbox(options: { folder: string; hidden: readonly string[]; network: boolean; policy: SandboxPolicy; contained?: Containment; own?: readonly string[] }): Sandbox {
  fs.mkdirSync(options.folder, { recursive: true });
  const contained = options.policy.mode === 'off' ? ({ kind: 'none', reason: 'turned off (--sandbox off)' } as const) : (options.contained ?? containment());
  return new Sandbox({ workspace: options.folder, hidden: options.hidden, network: options.network, limits: options.policy.limits, passEnv: [], ...(options.own ? { readOnly: options.own } : {}) }, contained);
}

/**
 * The folders a stdio server's own files need, from its command and its arguments that are files:
 * the outermost `node_modules` around one inside such a folder (a package finds its dependencies
 * there), else the nearest folder with a package.json (a script's imports), else its folder. The
 * sandbox binds those under /tmp only (a checkout there), read-only.
 */
export function ownFolders(command: string, args: readonly string[]): string[] {
  const folders = new Set<string>();
  for (const given of [command, ...args]) {
    if (!path.isAbsolute(given) || !fs.statSync(given, { throwIfNoEntry: false })?.isFile()) continue;
    const modules = given.split(path.sep).indexOf('node_modules');
    if (modules > 0) {
      folders.add(given.split(path.sep).slice(0, modules + 1).join(path.sep));
      continue;
    }
    let dir = path.dirname(given);
    while (!fs.existsSync(path.join(dir, 'package.json')) && path.dirname(dir) !== dir) dir = path.dirname(dir);
    folders.add(fs.existsSync(path.join(dir, 'package.json')) ? dir : path.dirname(given));
  }
  return [...folders];
}

export interface ToolboxOptions {
  servers: Readonly<Record<string, McpServerSpec>>;
  /** The teammate: its name (the servers' folders) and role (which servers it is offered). */
  agent: { name: string; role: string };
  /** The board's root: each server's folder is `workspace/mcp/<teammate>/<server>` in it. */
  rootDir: string;
  /** What the sandbox hides besides the home directory: the board, the start folder. */
  hidden: readonly string[];
  policy: SandboxPolicy;
  /** The stages the role works: a server may use the network when one of those it is offered in may. */
  roleStages: readonly string[];
  /** Where `${VAR}` comes from (default: this process's environment). */
  env?: NodeJS.ProcessEnv;
  emit(input: EventInput): void;
  contained?: Containment;
}

/**
 * A teammate's MCP servers: which are offered in a stage (its role in `roles`, the stage in `stages`),
 * each started on first need and kept until the teammate stops, their tools as tool definitions the
 * loop runs like any other. Every start, stop and failure is an `mcp_server` event.
 */
export class McpToolbox {
  private readonly connections = new Map<string, McpConnection>();
  private readonly definitions = new Map<string, ToolDefinition[]>();
  /** The repositories of the tasks seen, hidden from servers started later. */
  private readonly repos = new Set<string>();
  /** The task at hand, for the events of a server that stops while it is worked. */
  private scope: { task: number | null; pipeline: number | null } = { task: null, pipeline: null };

  constructor(private readonly options: ToolboxOptions) {}

  /** The servers offered to this teammate in `stage` (`general` for a general task). */
  servers(stage: string): string[] {
    return Object.entries(this.options.servers)
      .filter(([, spec]) => offeredTo(spec, this.options.agent.role, stage))
      .map(([name]) => name);
  }

  /**
   * The MCP tools offered in `stage` while `task` is worked, allow-lists applied; servers not yet
   * running are started now. A server that does not start offers nothing (its event says why).
   */
  async toolsFor(stage: string, task: Task): Promise<ToolDefinition[]> {
    this.scope = { task: task.id, pipeline: task.pipeline ?? null };
    if (task.artifacts.git) this.repos.add(localGit(this.options.rootDir, task.artifacts.git).repo);
    const lists = await Promise.all(this.servers(stage).map((name) => this.toolsOf(name)));
    return lists.flat();
  }

  /** Stops every server this teammate started. */
  async close(): Promise<void> {
    await Promise.all([...this.connections.values()].map((connection) => connection.close()));
  }

  private async toolsOf(name: string): Promise<ToolDefinition[]> {
    const known = this.definitions.get(name);
    if (known) return known;
    const connection = this.connection(name);
    let tools: McpToolInfo[];
    try {
      tools = await connection.tools();
    } catch {
      return [];
    }
    const allow = this.options.servers[name]!.tools;
    const offered = allow ? tools.filter((tool) => allow.includes(tool.name)) : tools;
    const taken = new Set<string>();
    const definitions = offered.map((tool): ToolDefinition => {
      let shown = mcpToolName(name, tool.name);
      // Two names that differ only in characters made `_`: the second gets the hash.
      if (taken.has(shown)) shown = mcpToolName(name, tool.name, true);
      taken.add(shown);
      return {
        name: shown,
        description: `${tool.description.slice(0, 4_000)}${tool.description ? '\n\n' : ''}(A tool of the MCP server '${name}'.)`,
        inputSchema: ARGUMENTS,
        inputJsonSchema: { ...tool.inputSchema, type: 'object' },
        run: (input, ctx) => connection.call(tool.name, shown, input as Record<string, unknown>, ctx.signal),
      };
    });
    this.definitions.set(name, definitions);
    return definitions;
  }

  private connection(name: string): McpConnection {
    const existing = this.connections.get(name);
    if (existing) return existing;
    const spec = this.options.servers[name]!;
    const { agent, policy, rootDir } = this.options;
    const stages = spec.stages ?? [...this.options.roleStages, 'general'];
    const network = policy.network.includes('*') || stages.some((stage) => policy.network.includes(stage));
    const place: ServerPlace = {
      env: this.options.env ?? process.env,
      sandbox: (own) =>
        serverSandbox({
          folder: path.join(rootDir, 'workspace', 'mcp', agent.name, name),
          hidden: [...this.options.hidden, ...this.repos],
          network,
          policy,
          own,
          ...(this.options.contained ? { contained: this.options.contained } : {}),
        }),
    };
    const connection = new McpConnection({
      name,
      timeoutMs: spec.timeoutMs,
      startTimeoutMs: spec.startTimeoutMs,
      open: () => openServer(name, spec, place),
      onState: (state) => this.told(name, state),
    });
    this.connections.set(name, connection);
    return connection;
  }

  private told(server: string, state: McpServerState): void {
    const { name, role } = this.options.agent;
    this.options.emit({ type: 'mcp_server', ...this.scope, agent: name, role, server, ...state });
  }
}

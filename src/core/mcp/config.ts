import { z } from 'zod';
import { unknownRole } from '../words.js';
import { checkReferences } from './expand.js';

/**
 * `mcpServers` in autoteam.config.json: the MCP servers whose tools teammates may use, in the shape
 * of Claude Code's `.mcp.json` (`{"<name>": {"command", "args", "env"}}` for a server started over
 * stdio, `{"type": "http", "url", "headers"}` for streamable HTTP), plus who gets them: `roles`
 * (default none, so adding a server never widens a role by surprise), `stages` (default every stage
 * of those roles, and their general tasks) and a `tools` allow-list.
 */

/** A server's name is part of its tools' names (`mcp__<server>__<tool>`), so `__` cannot be in it. */
export const MCP_SERVER_NAME = /^(?!_)(?!.*__)(?!.*_$)[A-Za-z0-9_-]{1,32}$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Seconds a tool call may take, and a start (spawn, initialize, list tools), unless the server says. */
export const DEFAULT_CALL_TIMEOUT_S = 60;
export const DEFAULT_START_TIMEOUT_S = 30;

export const McpServerEntrySchema = z
  .object({
    type: z.enum(['stdio', 'http'], { error: 'only "stdio" (the default: command, args, env) and "http" (streamable HTTP: url, headers) servers; SSE is not supported' }).optional(),
    command: z.string().min(1).optional(),
    args: z.array(z.string()).optional(),
    env: z.record(z.string().regex(ENV_NAME, 'a variable name: letters, digits and _'), z.string()).optional(),
    url: z.string().min(1).optional(),
    headers: z.record(z.string().min(1), z.string()).optional(),
    /** The roles whose teammates are offered the server's tools; none by default. */
    roles: z.array(z.string().min(1)).optional(),
    /** The stages (and `general`, for general tasks) in which they are offered; default all of those roles'. */
    stages: z.array(z.string().min(1)).optional(),
    /** The server's tools offered, by the server's names; default all. */
    tools: z.array(z.string().min(1)).optional(),
    /** Seconds a tool call may take before it is a tool error (default 60). */
    timeout: z.number().positive().optional(),
    /** Seconds the server may take to start and list its tools (default 30). */
    startTimeout: z.number().positive().optional(),
  })
  .strict();

/** Names are checked by checkMcpServers: zod reports a record key it refuses without its message. */
export const McpServersSchema = z.record(z.string(), McpServerEntrySchema);

export type McpServerEntry = z.infer<typeof McpServerEntrySchema>;

interface Offer {
  roles: string[];
  stages?: string[];
  tools?: string[];
  timeoutMs: number;
  startTimeoutMs: number;
}

/**
 * A server as the runtime uses it: plain JSON (it travels to every thread and `autoteam worker` with
 * the settings), `${VAR}` references still unexpanded — each process expands them from its own
 * environment when it starts the server (expand.ts).
 */
export type McpServerSpec =
  | ({ transport: 'stdio'; command: string; args: string[]; env: Record<string, string> } & Offer)
  | ({ transport: 'http'; url: string; headers: Record<string, string> } & Offer);

export interface McpCheckContext {
  /** Every role of the team (`any` included). */
  roles: ReadonlySet<string>;
  /** Stage → the role that works it. */
  stageRoles: ReadonlyMap<string, string>;
}

/**
 * Checks what the schema cannot (a transport's required fields, roles and stages that exist, the
 * `${VAR}` references) and returns the specs. `fail` throws with the key path; `warn` notes what is
 * allowed but probably not meant.
 */
export function checkMcpServers(
  entries: Record<string, McpServerEntry>,
  context: McpCheckContext,
  fail: (detail: string) => never,
  warn: (detail: string) => void,
): Record<string, McpServerSpec> {
  const specs: Record<string, McpServerSpec> = {};
  for (const [name, entry] of Object.entries(entries)) {
    const at = `mcpServers.${name}`;
    if (!MCP_SERVER_NAME.test(name)) fail(`${at}: a server name: letters, digits, - and single _, at most 32 (it is part of mcp__<server>__<tool>)`);
    const roles = entry.roles ?? [];
    roles.forEach((role, i) => {
      if (!context.roles.has(role)) fail(`${at}.roles.${i}: ${unknownRole(role, context.roles)}`);
    });
    (entry.stages ?? []).forEach((stage, i) => {
      const worker = stage === 'general' ? null : context.stageRoles.get(stage);
      if (stage !== 'general' && worker === undefined) fail(`${at}.stages.${i}: no stage '${stage}' (stages: ${[...context.stageRoles.keys()].join(', ')}, or general)`);
      if (worker && !roles.includes(worker) && !roles.includes('any')) fail(`${at}.stages.${i}: the ${stage} stage is worked by ${worker}, which is not in ${at}.roles`);
    });
    if (roles.length === 0) warn(`${at}: no roles, so no teammate is offered its tools (add "roles": ["engineer"], say)`);
    const offer: Offer = {
      roles,
      ...(entry.stages ? { stages: entry.stages } : {}),
      ...(entry.tools ? { tools: entry.tools } : {}),
      timeoutMs: Math.round((entry.timeout ?? DEFAULT_CALL_TIMEOUT_S) * 1000),
      startTimeoutMs: Math.round((entry.startTimeout ?? DEFAULT_START_TIMEOUT_S) * 1000),
    };
    if (entry.type === 'http') {
      for (const key of ['command', 'args', 'env'] as const) if (entry[key] !== undefined) fail(`${at}.${key}: an http server has a url and headers, not ${key}`);
      if (!entry.url) fail(`${at}.url: an http server needs its url`);
      const url = entry.url;
      checkReferences(url, `${at}.url`, fail);
      if (!url.includes('${')) {
        let parsed: URL | null = null;
        try {
          parsed = new URL(url);
        } catch {
          // said below
        }
        if (!parsed || !['http:', 'https:'].includes(parsed.protocol)) fail(`${at}.url: '${url}' is not an http(s) URL`);
      }
      for (const [header, value] of Object.entries(entry.headers ?? {})) checkReferences(value, `${at}.headers.${header}`, fail);
      specs[name] = { transport: 'http', url, headers: { ...entry.headers }, ...offer };
    } else {
      for (const key of ['url', 'headers'] as const) if (entry[key] !== undefined) fail(`${at}.${key}: a stdio server has a command, args and env (for a URL, set "type": "http")`);
      if (!entry.command) fail(`${at}.command: a stdio server needs its command (or "type": "http" and a url)`);
      const command = entry.command;
      checkReferences(command, `${at}.command`, fail);
      (entry.args ?? []).forEach((arg, i) => checkReferences(arg, `${at}.args.${i}`, fail));
      for (const [variable, value] of Object.entries(entry.env ?? {})) checkReferences(value, `${at}.env.${variable}`, fail);
      specs[name] = { transport: 'stdio', command, args: [...(entry.args ?? [])], env: { ...entry.env }, ...offer };
    }
  }
  return specs;
}

/** Whether a teammate of `role` working a task of `stage` (`general` for a general task) is offered the server. */
export function offeredTo(spec: McpServerSpec, role: string, stage: string): boolean {
  return spec.roles.includes(role) && (!spec.stages || spec.stages.includes(stage));
}

/** How the server is reached, for `mcp list` and errors: its command line or URL as configured (unexpanded). */
export function describeServer(spec: McpServerSpec): string {
  return spec.transport === 'stdio' ? `stdio: ${[spec.command, ...spec.args].join(' ')}` : `http: ${spec.url}`;
}

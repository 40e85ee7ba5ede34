import { ConfigError } from '../errors.js';
import type { McpServerSpec } from './config.js';

/**
 * `${VAR}` and `${VAR:-default}` in an MCP server's command, args, env, url and headers, as Claude
 * Code's `.mcp.json` has them. They are the only way the person's environment reaches a server:
 * the server's environment is built from them alone (plus the sandbox's allow-list), never
 * inherited. The model providers' own settings (their keys) are refused outright.
 */

const REFERENCE = /\$\{([^}]*)\}/g;
const NAME_AND_DEFAULT = /^([A-Za-z_][A-Za-z0-9_]*)(?::-(.*))?$/s;
/** The model's key and endpoint settings: a server never gets them, whatever the config says. */
const MODEL_SETTINGS = /^(ANTHROPIC|OPENAI)_/;

/** Checks every reference in `value` (`at` names the field in errors); `fail` throws. */
export function checkReferences(value: string, at: string, fail: (detail: string) => never): void {
  const unclosed = value.replace(REFERENCE, '').indexOf('${');
  if (unclosed >= 0) fail(`${at}: '\${' without its closing '}'`);
  for (const match of value.matchAll(REFERENCE)) {
    const parsed = NAME_AND_DEFAULT.exec(match[1]!);
    if (!parsed) fail(`${at}: '${match[0]}' is not \${NAME} or \${NAME:-default}`);
    if (MODEL_SETTINGS.test(parsed[1]!)) fail(`${at}: \${${parsed[1]}} is the model's setting; it never reaches an MCP server`);
  }
}

/** The names `value` refers to; `required`: only those without a default (what must be set for it to expand). */
export function referencedVariables(value: string, required = false): string[] {
  return [...value.matchAll(REFERENCE)].flatMap((match) => {
    const parsed = NAME_AND_DEFAULT.exec(match[1]!);
    return parsed && (!required || parsed[2] === undefined) ? [parsed[1]!] : [];
  });
}

/** `value` with its references replaced from `env`; a variable that is not set (and has no default) is an error naming `at`. */
export function expandValue(value: string, env: NodeJS.ProcessEnv, at: string): string {
  return value.replace(REFERENCE, (whole, inner: string) => {
    const parsed = NAME_AND_DEFAULT.exec(inner);
    // checkReferences refused these when the config was read; a spec built in code gets the same answer.
    if (!parsed) throw new ConfigError(`${at}: '${whole}' is not \${NAME} or \${NAME:-default}`);
    const [, name, fallback] = parsed as unknown as [string, string, string | undefined];
    if (MODEL_SETTINGS.test(name)) throw new ConfigError(`${at}: \${${name}} is the model's setting; it never reaches an MCP server`);
    const set = env[name];
    if (set !== undefined && set !== '') return set;
    if (fallback !== undefined) return fallback;
    throw new ConfigError(`${at}: \${${name}} is not set in the environment`);
  });
}

/** What starting a server takes, its references expanded. */
export type McpLaunch =
  | { transport: 'stdio'; command: string; args: string[]; env: Record<string, string> }
  | { transport: 'http'; url: URL; headers: Record<string, string> };

/** The server `name` ready to start, from `env` (this process's environment); errors name the field. */
export function expandServer(name: string, spec: McpServerSpec, env: NodeJS.ProcessEnv): McpLaunch {
  const at = `mcpServers.${name}`;
  if (spec.transport === 'stdio') {
    return {
      transport: 'stdio',
      command: expandValue(spec.command, env, `${at}.command`),
      args: spec.args.map((arg, i) => expandValue(arg, env, `${at}.args.${i}`)),
      env: Object.fromEntries(Object.entries(spec.env).map(([key, value]) => [key, expandValue(value, env, `${at}.env.${key}`)])),
    };
  }
  const url = expandValue(spec.url, env, `${at}.url`);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigError(`${at}.url: not a URL once expanded`);
  }
  if (!['http:', 'https:'].includes(parsed.protocol)) throw new ConfigError(`${at}.url: not an http(s) URL once expanded`);
  return {
    transport: 'http',
    url: parsed,
    headers: Object.fromEntries(Object.entries(spec.headers).map(([key, value]) => [key, expandValue(value, env, `${at}.headers.${key}`)])),
  };
}

/** Every variable the server needs set (for a warning at start: a server that will not start). */
export function serverVariables(spec: McpServerSpec): string[] {
  const values = spec.transport === 'stdio' ? [spec.command, ...spec.args, ...Object.values(spec.env)] : [spec.url, ...Object.values(spec.headers)];
  return [...new Set(values.flatMap((value) => referencedVariables(value, true)))];
}

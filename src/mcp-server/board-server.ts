import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { redact, secretValues } from '../core/trace/redact.js';
import type { SessionServer } from './http-server.js';
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
export function boardServer(options: BoardToolsOptions): SessionServer {
  const server = new McpServer({ name: 'autoteam', version: OWN_PACKAGE.version }, { instructions: INSTRUCTIONS });
  registerBoardTools(server, options);
  const resources = new TaskResources(server, options.controls);
  resources.register();
  // The environment's secrets, read once, as the web board's responses are redacted: a task written
  // by a process whose environment lacked one (an `autoteam post` from another shell) holds it raw.
  const secrets = secretValues();
  return { server, connect: (transport) => server.connect(redacting(transport, secrets)), close: () => resources.close() };
}

/** `transport`, with every message sent through it redacted (each string in it, so the JSON stays whole), and a refusal of its params said as such (invalidParams). */
function redacting(transport: Transport, secrets: readonly string[]): Transport {
  const clean = (value: unknown): unknown =>
    typeof value === 'string' ? redact(value, secrets) : Array.isArray(value) ? value.map(clean) : value && typeof value === 'object' ? Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, clean(inner)])) : value;
  return new Proxy(transport, {
    get(target, property) {
      if (property === 'send') return (message: JSONRPCMessage, options?: TransportSendOptions) => target.send(invalidParams((secrets.length ? clean(message) : message) as JSONRPCMessage), options);
      const value: unknown = Reflect.get(target, property);
      return typeof value === 'function' ? value.bind(target) : value;
    },
    // The protocol sets onmessage, onclose, onerror: on the transport itself.
    set: (target, property, value) => Reflect.set(target, property, value),
  });
}

/**
 * A request whose params the SDK's schema refuses (a tools/call with no params, arguments that are
 * no object) is answered by the SDK as an internal error (-32603) whose message is the validator's
 * issues as pretty JSON. Said as JSON-RPC says it instead: -32602, one line naming each field.
 */
export function invalidParams(message: JSONRPCMessage): JSONRPCMessage {
  if (!('error' in message) || message.error.code !== -32603 || !message.error.message.startsWith('[')) return message;
  let issues: unknown;
  try {
    issues = JSON.parse(message.error.message);
  } catch {
    return message;
  }
  // The request's own params only (each issue's path starts there): a validation error of our own code stays what it is.
  if (!Array.isArray(issues) || issues.length === 0 || !issues.every((issue) => issue && typeof issue.message === 'string' && Array.isArray(issue.path) && issue.path[0] === 'params')) return message;
  const said = (issues as Array<{ path: unknown[]; message: string }>).map((issue) => `${issue.path.map(String).join('.') || '(the request)'}: ${issue.message}`).join('; ');
  return { ...message, error: { code: -32602, message: `Invalid params: ${said}` } };
}

import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { ToolOutcome } from '../tools/tool.js';
import { toolError } from '../tools/tool.js';
import { formatBytes } from '../sizes.js';
import { redact } from '../trace/redact.js';

/** A `tools/call` result as the SDK returns it, kept to what is read here. */
export interface CallResult {
  content?: unknown;
  structuredContent?: unknown;
  isError?: unknown;
}

type Item = { type?: unknown; text?: unknown; data?: unknown; mimeType?: unknown; uri?: unknown; name?: unknown; resource?: Record<string, unknown> };

/** Base64 → the size of what it encodes. */
function decodedBytes(data: unknown): string {
  return typeof data === 'string' ? formatBytes(Math.floor((data.replace(/=+$/, '').length * 3) / 4)) : 'unknown size';
}

/** One content item as text: text as it is; images, audio and resources as a short note (the model gets no binary). */
function itemText(item: Item): string {
  switch (item.type) {
    case 'text':
      return String(item.text ?? '');
    case 'image':
    case 'audio':
      return `[${item.type}: ${String(item.mimeType ?? 'unknown type')}, ${decodedBytes(item.data)} — not shown]`;
    case 'resource_link':
      return `[resource link: ${String(item.uri ?? '?')}${item.name ? ` (${String(item.name)})` : ''}]`;
    case 'resource': {
      const resource = item.resource ?? {};
      const size = typeof resource.text === 'string' ? formatBytes(Buffer.byteLength(resource.text)) : decodedBytes(resource.blob);
      return `[resource: ${String(resource.uri ?? '?')}${resource.mimeType ? ` (${String(resource.mimeType)}, ${size})` : ` (${size})`} — not shown]`;
    }
    default:
      return `[${String(item.type ?? 'unknown')} content — not shown]`;
  }
}

function sameJson(text: string, value: unknown): boolean {
  try {
    return JSON.stringify(JSON.parse(text)) === JSON.stringify(value);
  } catch {
    return false;
  }
}

/**
 * A tool's result as the model reads it: its text, its structured content as JSON (unless a text
 * item already holds the same JSON, as the spec asks servers to send), notes for what is not text.
 * `isError` from the server is a tool error; everything is redacted with the server's own secrets.
 */
export function outcomeOf(result: CallResult, secrets: readonly string[]): ToolOutcome {
  const items = Array.isArray(result.content) ? (result.content as Item[]) : [];
  const texts = items.map(itemText);
  const structured = result.structuredContent;
  if (structured !== undefined && !items.some((item) => item.type === 'text' && sameJson(String(item.text ?? ''), structured))) {
    texts.push(`structured content: ${JSON.stringify(structured)}`);
  }
  const content = redact(texts.join('\n').trim() || '(no content)', secrets);
  return result.isError === true ? toolError(content, 'error') : { content };
}

/**
 * A call that did not return a result, as a tool error of the right kind: a timeout, arguments the
 * server refused, the protocol's other errors, or a cancelled call. (A server that stopped during the
 * call is the connection's to tell: it knows how it ended.)
 */
export function errorOutcome(tool: string, error: unknown, timeoutMs: number, timeoutKey: string, secrets: readonly string[]): ToolOutcome {
  const say = (text: string, kind: Parameters<typeof toolError>[1]) => toolError(redact(text, secrets), kind);
  if (error instanceof McpError) {
    if (error.code === ErrorCode.RequestTimeout) {
      return say(`${tool} timed out after ${timeoutMs / 1000} s (${timeoutKey}); the server was asked to cancel it. Try something smaller, or do without it.`, 'timeout');
    }
    if (error.code === ErrorCode.InvalidParams) return say(`${tool}: the server refused the arguments: ${error.message}`, 'invalid_arguments');
    return say(`${tool}: ${error.message}`, 'error');
  }
  if ((error as Error)?.name === 'AbortError') return say(`${tool} was cancelled (the task is ending)`, 'error');
  return say(`${tool} failed: ${(error as Error)?.message ?? String(error)}`, 'execution_failed');
}

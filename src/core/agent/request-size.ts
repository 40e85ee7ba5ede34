import { RequestTooLargeError } from '../errors.js';
import type { ModelMessage, ToolSpec } from '../model/types.js';
import { cutText } from '../sizes.js';
import { estimateTokens } from './compaction.js';

/** The most estimated input tokens one model request may carry (MAX_REQUEST_TOKENS). */
export const DEFAULT_MAX_REQUEST_TOKENS = 100_000;
/** As estimateTokens counts: 4 characters a token. */
export const CHARS_PER_TOKEN = 4;
/** A piece cut to fit the ceiling keeps at least this much (start and end), so it still says what it was. */
const KEEP_CHARS = 1_000;
const KEEP_TAIL = 300;

export interface RequestParts {
  system: string;
  tools: readonly ToolSpec[];
  messages: readonly ModelMessage[];
}

/** Estimated input tokens of a whole request: system prompt, tool definitions and conversation. */
export function estimateRequestTokens(request: RequestParts): number {
  const fixed = request.system.length + (request.tools.length ? JSON.stringify(request.tools).length : 0);
  return Math.ceil(fixed / CHARS_PER_TOKEN) + estimateTokens(request.messages);
}

/** One text of the conversation that may be cut: a message, a text block, a tool result, a string in a tool call's input. */
interface Piece {
  kind: 'result' | 'input' | 'text';
  /** In the conversation's last message: what the model is about to read, cut last. */
  newest: boolean;
  get(): string;
  set(value: string): void;
}

function piecesOf(messages: readonly ModelMessage[]): Piece[] {
  const pieces: Piece[] = [];
  messages.forEach((message, index) => {
    const newest = index === messages.length - 1;
    if (typeof message.content === 'string') {
      const owner = message;
      pieces.push({ kind: 'text', newest, get: () => owner.content as string, set: (value) => (owner.content = value) });
      return;
    }
    for (const block of message.content) {
      if (block.type === 'text') pieces.push({ kind: 'text', newest, get: () => block.text, set: (value) => (block.text = value) });
      else if (block.type === 'tool_result') pieces.push({ kind: 'result', newest, get: () => block.content, set: (value) => (block.content = value) });
      else if (block.type === 'tool_use') pieces.push(...inputStrings(block.input, newest));
    }
  });
  return pieces;
}

/** The strings inside a tool call's input (a file's content in write_file), as pieces. */
function inputStrings(input: unknown, newest: boolean): Piece[] {
  if (!input || typeof input !== 'object') return [];
  const record = input as Record<string, unknown>;
  return Object.keys(record).flatMap((key): Piece[] =>
    typeof record[key] === 'string'
      ? [{ kind: 'input', newest, get: () => record[key] as string, set: (value) => (record[key] = value) }]
      : inputStrings(record[key], newest),
  );
}

/**
 * The order pieces are cut in: tool results and tool inputs before texts (the task statement is a
 * text), oldest first, and the last message — what the model is about to read — only after all else.
 */
const ORDER: ReadonlyArray<(piece: Piece) => boolean> = [
  (piece) => !piece.newest && piece.kind !== 'text',
  (piece) => !piece.newest && piece.kind === 'text',
  (piece) => piece.newest && piece.kind !== 'text',
  (piece) => piece.newest && piece.kind === 'text',
];

/**
 * Cuts the conversation in place until the request is at most `maxTokens` (estimated), in ORDER —
 * the oldest tool results and tool-call strings, then the oldest texts, the last message last —
 * each by as much as is still needed, never below KEEP_CHARS, with a note saying how much went. What stays
 * cut in the conversation is not cut again on the next turn. Throws RequestTooLargeError when even
 * that is not enough (a system prompt or tool list over the ceiling). Returns how many pieces it cut.
 */
export function fitRequest(request: RequestParts, maxTokens: number): number {
  const fixedTokens = estimateRequestTokens({ ...request, messages: [] });
  const note = `the request is held under MAX_REQUEST_TOKENS (${maxTokens})`;
  let cut = 0;
  // A few rounds: JSON escaping makes a cut of n characters save a little more or less than n.
  for (let round = 0; round < 4; round++) {
    const total = estimateRequestTokens(request);
    if (total <= maxTokens) return cut;
    let excess = (total - maxTokens) * CHARS_PER_TOKEN + 200;
    const before = cut;
    const pieces = piecesOf(request.messages);
    for (const turn of ORDER) {
      for (const piece of pieces) {
        if (excess <= 0) break;
        if (!turn(piece)) continue;
        const value = piece.get();
        if (value.length <= KEEP_CHARS + 200) continue;
        // The note itself takes ~120 characters: cut that much more.
        const shorter = cutText(value, Math.max(KEEP_CHARS, value.length - excess - 160), note, { tail: KEEP_TAIL });
        if (shorter.length >= value.length) continue;
        piece.set(shorter);
        excess -= value.length - shorter.length;
        cut++;
      }
    }
    if (cut === before) break;
  }
  const total = estimateRequestTokens(request);
  if (total <= maxTokens) return cut;
  const fixed = fixedTokens > maxTokens ? ` (the system prompt and tool definitions alone are ~${fixedTokens})` : '';
  throw new RequestTooLargeError(
    `the model request would carry ~${total} input tokens, over MAX_REQUEST_TOKENS (${maxTokens}), even with every text cut${fixed}; raise MAX_REQUEST_TOKENS or shorten the prompt`,
  );
}

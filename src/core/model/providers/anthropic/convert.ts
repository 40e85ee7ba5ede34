import type Anthropic from '@anthropic-ai/sdk';
import type { AssistantBlock, ContentBlock, ModelMessage, ModelRequest, ModelResponse, ToolSpec, Usage } from '../../types.js';
import { isRecord } from '../common.js';
import { DEFAULT_MAX_TOKENS } from './settings.js';

/** The runtime's request and response shapes to and from the Messages API: nothing else happens here. */

const EPHEMERAL = { type: 'ephemeral' } as const;

export function toParams(model: string, request: ModelRequest): Anthropic.MessageCreateParamsNonStreaming {
  return {
    model,
    max_tokens: request.maxTokens ?? DEFAULT_MAX_TOKENS,
    // The API rejects empty text blocks, so an empty system prompt is left out.
    ...(request.system ? { system: [{ type: 'text', text: request.system, cache_control: EPHEMERAL }] } : {}),
    ...(request.tools.length > 0 && { tools: toTools(request.tools) }),
    messages: request.messages.map(toMessageParam),
  };
}

/** A cache breakpoint on the last tool caches the whole tool list; the one on system caches both. */
function toTools(tools: ToolSpec[]): Anthropic.Tool[] {
  return tools.map((tool, index) => ({
    name: tool.name,
    description: tool.description,
    input_schema: tool.input_schema,
    ...(index === tools.length - 1 && { cache_control: EPHEMERAL }),
  }));
}

function toMessageParam(message: ModelMessage): Anthropic.MessageParam {
  if (typeof message.content === 'string') return { role: message.role, content: message.content };
  return { role: message.role, content: message.content.map(toBlockParam) };
}

// Rebuilt field by field so that anything else a caller keeps on a block never reaches the API.
function toBlockParam(block: ContentBlock): Anthropic.ContentBlockParam {
  switch (block.type) {
    case 'text':
      return { type: 'text', text: block.text };
    case 'tool_use':
      return { type: 'tool_use', id: block.id, name: block.name, input: block.input };
    case 'tool_result':
      return {
        type: 'tool_result',
        tool_use_id: block.tool_use_id,
        content: block.content,
        ...(block.is_error && { is_error: true }),
      };
  }
}

/** A Messages API response as the runtime's, or null when `message` is not one (a wrong endpoint). */
export function fromMessage(message: unknown): ModelResponse | null {
  if (!isRecord(message) || !Array.isArray(message.content)) return null;
  const content: AssistantBlock[] = [];
  for (const block of message.content as unknown[]) {
    if (!isRecord(block)) continue;
    if (block.type === 'text' && typeof block.text === 'string') {
      content.push({ type: 'text', text: block.text });
    } else if (block.type === 'tool_use' && typeof block.id === 'string' && typeof block.name === 'string') {
      content.push({ type: 'tool_use', id: block.id, name: block.name, input: block.input ?? {} });
    }
    // Other block types (thinking, server tools) only come back for features we never request.
  }
  const usage = isRecord(message.usage) ? message.usage : {};
  const tokens = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) ? value : 0);
  const mapped: Usage = {
    inputTokens: tokens(usage.input_tokens),
    outputTokens: tokens(usage.output_tokens),
    cacheReadTokens: tokens(usage.cache_read_input_tokens),
    cacheWriteTokens: tokens(usage.cache_creation_input_tokens),
  };
  return {
    content,
    stopReason: typeof message.stop_reason === 'string' ? message.stop_reason : 'end_turn',
    usage: mapped,
    ...(typeof message.model === 'string' && { model: message.model }),
  };
}

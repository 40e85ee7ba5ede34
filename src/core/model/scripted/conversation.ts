import type { ContentBlock, ModelMessage } from '../types.js';

export interface ToolCall {
  name: string;
  input: Record<string, unknown>;
  result?: { content: string; isError: boolean };
}

/** What a policy decides for one turn: some text and zero or more tool calls. */
export interface Decision {
  text?: string;
  calls: Array<{ name: string; input: Record<string, unknown> }>;
}

const SUMMARY_CALL = /^- called (\S+) (\{.*\}) → (ok|error): (.*)$/;

function blocks(message: ModelMessage): ContentBlock[] {
  return typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
}

/**
 * Every tool call in the conversation paired with its real result, including calls recorded in a
 * compaction summary (the offline model writes them there in a form it can read back).
 */
export function toolCalls(messages: readonly ModelMessage[]): ToolCall[] {
  const calls: ToolCall[] = [];
  const byId = new Map<string, ToolCall>();
  for (const message of messages) {
    for (const block of blocks(message)) {
      if (block.type === 'text' && block.text.includes('<progress-summary>')) {
        for (const line of block.text.split('\n')) {
          const call = parseSummaryLine(line);
          if (call) calls.push(call);
        }
      } else if (block.type === 'tool_use') {
        const call: ToolCall = { name: block.name, input: (block.input ?? {}) as Record<string, unknown> };
        calls.push(call);
        byId.set(block.id, call);
      } else if (block.type === 'tool_result') {
        const call = byId.get(block.tool_use_id);
        if (call) call.result = { content: block.content, isError: block.is_error === true };
      }
    }
  }
  return calls;
}

/** One `- called NAME {input} → ok|error: result` line of an offline compaction summary. */
export function parseSummaryLine(line: string): ToolCall | null {
  const match = SUMMARY_CALL.exec(line);
  if (!match) return null;
  return {
    name: match[1]!,
    input: JSON.parse(match[2]!) as Record<string, unknown>,
    result: { content: match[4]!.replace(/\\n/g, '\n'), isError: match[3] === 'error' },
  };
}

export function callsOf(calls: readonly ToolCall[], name: string): ToolCall[] {
  return calls.filter((call) => call.name === name);
}

/**
 * The command a run could not start (exit 127), as its stderr names it: the shell's `python3:
 * command not found`, or the launcher's `failed to execute python3: No such file or directory` (the
 * last named: the one that ended it). Never a line of the run's stdout, which is the program's own.
 * Null for any other result.
 */
export function commandNotFound(call: ToolCall | undefined): string | null {
  const content = call?.result?.content ?? '';
  if (!/\bexit 127\b/.test(content.split('\n')[0] ?? '')) return null;
  const at = content.lastIndexOf('\nstderr:\n');
  const stderr = at < 0 ? '' : content.slice(at + '\nstderr:\n'.length);
  const named = [...stderr.matchAll(/(?:^|[\s:])([\w.+-]+): (?:command )?not found$|failed to execute ([\w.+-]+): No such file or directory$/gm)].at(-1);
  return named ? (named[1] ?? named[2] ?? null) : null;
}

/** What a run that could not find `command` asks of the person. */
export const installHint = (command: string): string => `install ${command} or add it to PATH, then run again`;

export function lastCall(calls: readonly ToolCall[], name?: string): ToolCall | undefined {
  for (let i = calls.length - 1; i >= 0; i--) if (!name || calls[i]!.name === name) return calls[i];
  return undefined;
}

/** Text of the last user message (new inbox messages, nudges). */
export function lastUserText(messages: readonly ModelMessage[]): string {
  const last = [...messages].reverse().find((m) => m.role === 'user');
  if (!last) return '';
  return blocks(last)
    .filter((block) => block.type === 'text')
    .map((block) => (block as { text: string }).text)
    .join('\n');
}

export function allText(messages: readonly ModelMessage[]): string {
  return messages.map((m) => blocks(m).map((b) => (b.type === 'text' ? b.text : b.type === 'tool_result' ? b.content : '')).join('\n')).join('\n');
}

/** The compaction summary the offline model writes: one parseable line per tool call. */
export function summarizeCalls(calls: readonly ToolCall[]): string {
  const lines = calls.map((call) => {
    const status = call.result?.isError ? 'error' : 'ok';
    const content = (call.result?.content ?? '').slice(0, 4000).replace(/\n/g, '\\n');
    return `- called ${call.name} ${JSON.stringify(call.input)} → ${status}: ${content}`;
  });
  return [`Work so far (${calls.length} tool calls):`, ...lines].join('\n');
}

import { z } from 'zod';
import type { Message } from '../board/index.js';
import { defineTool } from './tool.js';

export function formatMessages(messages: readonly Message[]): string {
  if (messages.length === 0) return 'Inbox empty.';
  return messages.map((m) => `[${m.type}] from ${m.from}: ${m.content}`).join('\n');
}

export const readInboxTool = defineTool({
  name: 'read_inbox',
  description: 'Read and empty your inbox. Messages are also delivered to you automatically before each turn.',
  inputSchema: z.object({}),
  async run(_input, ctx) {
    return { content: formatMessages(await ctx.mailbox.drain(ctx.agent.name)) };
  },
});

import { z } from 'zod';
import { defineTool } from './tool.js';

export const broadcastTool = defineTool({
  name: 'broadcast',
  description: 'Send the same message to every member of the team (not to yourself).',
  inputSchema: z.object({ content: z.string().min(1) }),
  async run({ content }, ctx) {
    const sent = await ctx.mailbox.broadcast(ctx.agent.name, content);
    return { content: `Broadcast to ${sent.map((m) => m.to).join(', ') || 'nobody'}.` };
  },
});

import { z } from 'zod';
import { defineTool, toolError } from './tool.js';

export const sendMessageTool = defineTool({
  name: 'send_message',
  description: "Send a message to one teammate's inbox (or to the lead). Use the exact name from the team.",
  inputSchema: z.object({
    to: z.string().min(1).describe('recipient name'),
    content: z.string().min(1).describe('the message'),
  }),
  async run({ to, content }, ctx) {
    try {
      await ctx.mailbox.send(ctx.agent.name, to, content, 'message');
      return { content: `Sent to ${to}.` };
    } catch (error) {
      return toolError((error as Error).message);
    }
  },
});

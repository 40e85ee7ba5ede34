import { z } from 'zod';
import { defineTool } from './tool.js';

export const idleTool = defineTool({
  name: 'idle',
  description: 'Stop working and go idle: you will be woken when a new task or message arrives.',
  inputSchema: z.object({ reason: z.string().optional().describe('why you are going idle') }),
  async run({ reason }) {
    return { content: 'Going idle.', signal: { kind: 'idle', reason: reason ?? 'idle tool' } };
  },
});

import { z } from 'zod';
import { defineTool, toolError } from '../tool.js';
import type { LeadServices } from './services.js';

export const shutdownRequestTool = (lead: LeadServices) =>
  defineTool({
    name: 'shutdown_request',
    description: 'Ask a teammate to finish its turn and shut down (it answers with shutdown_response; its task goes back to the board).',
    inputSchema: z.object({ name: z.string().min(1) }),
    async run({ name }) {
      try {
        const exit = await lead.requestShutdown(name);
        if (typeof exit === 'string') return { content: exit };
        return exit ? { content: `${name} shut down.` } : toolError(`${name} is not running (list_teammates lists the team)`);
      } catch (error) {
        return toolError((error as Error).message);
      }
    },
  });

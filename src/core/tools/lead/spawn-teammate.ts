import { z } from 'zod';
import { defineTool, toolError } from '../tool.js';
import type { LeadServices } from './services.js';

export const spawnTeammateTool = (lead: LeadServices) =>
  defineTool({
    name: 'spawn_teammate',
    description: 'Start a new teammate (its own thread) with a name and a role (analyst, engineer, reviewer, or any role for general tasks).',
    inputSchema: z.object({
      name: z.string().regex(/^[A-Za-z0-9_-]+$/, 'letters, digits, _ and - only'),
      role: z.string().min(1),
      prompt: z.string().optional().describe('extra instructions for this teammate'),
    }),
    async run({ name, role, prompt }) {
      try {
        lead.spawn(name, role, prompt);
        return { content: `Spawned ${name} (${role}).` };
      } catch (error) {
        return toolError((error as Error).message);
      }
    },
  });

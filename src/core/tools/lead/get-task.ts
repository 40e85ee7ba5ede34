import { z } from 'zod';
import { defineTool, toolError } from '../tool.js';
import type { LeadServices } from './services.js';

export const getTaskTool = (lead: LeadServices) =>
  defineTool({
    name: 'get_task',
    description: "Read one task's full record (status, owner, handoff, artifacts, history).",
    inputSchema: z.object({ task_id: z.number().int().positive() }),
    async run({ task_id }) {
      try {
        return { content: JSON.stringify(lead.readTask(task_id), null, 2).slice(0, 8000) };
      } catch (error) {
        return toolError((error as Error).message);
      }
    },
  });

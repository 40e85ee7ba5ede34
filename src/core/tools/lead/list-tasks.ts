import { z } from 'zod';
import { TASK_STATUSES } from '../../board/schemas.js';
import { defineTool } from '../tool.js';
import type { LeadServices } from './services.js';

export const listTasksTool = (lead: LeadServices) =>
  defineTool({
    name: 'list_tasks',
    description: 'List the tasks on the board (optionally only one status), one line each.',
    inputSchema: z.object({ status: z.enum(TASK_STATUSES).optional() }),
    async run({ status }) {
      const tasks = lead.tasks().filter((task) => !status || task.status === status);
      if (tasks.length === 0) return { content: 'No tasks.' };
      const lines = tasks.slice(-50).map((task) => {
        const stage = task.stage ? ` [${task.stage}${task.revision ? ` r${task.revision}` : ''}]` : '';
        return `#${task.id} ${task.status}${stage} ${task.subject}${task.owner ? ` @${task.owner}` : ''}`;
      });
      return { content: `${tasks.length > 50 ? `(last 50 of ${tasks.length})\n` : ''}${lines.join('\n')}` };
    },
  });

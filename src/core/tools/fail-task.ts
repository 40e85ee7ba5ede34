import { z } from 'zod';
import { defineTool, toolError } from './tool.js';

export const failTaskTool = defineTool({
  name: 'fail_task',
  description: 'Mark your current task failed with the reason (it cannot be done as asked). Ends your work on it.',
  inputSchema: z.object({ reason: z.string().min(1).describe('why it failed, briefly') }),
  async run({ reason }, ctx) {
    if (!ctx.task || !ctx.fence) return toolError('you have no claimed task');
    return { content: `Task #${ctx.task.id} will be marked failed.`, signal: { kind: 'fail', reason } };
  },
});

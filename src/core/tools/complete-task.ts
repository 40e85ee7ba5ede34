import { z } from 'zod';
import { defineTool, toolError } from './tool.js';

export const completeTaskTool = defineTool({
  name: 'complete_task',
  description: 'Mark your current task completed with a short result. Ends your work on it.',
  inputSchema: z.object({ result: z.string().min(1).describe('what you did, briefly') }),
  async run({ result }, ctx) {
    if (!ctx.task || !ctx.fence) return toolError('you have no claimed task; use claim_task first');
    const outcome = await ctx.board.complete(ctx.task.id, ctx.fence, result);
    if (!outcome.ok) return toolError(outcome.reason);
    const id = ctx.task.id;
    ctx.task = outcome.task;
    return { content: `Task #${id} completed.`, signal: { kind: 'idle', reason: `completed #${id}` } };
  },
});

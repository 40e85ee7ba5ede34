import { z } from 'zod';
import { defineTool, toolError } from './tool.js';

export const claimTaskTool = defineTool({
  name: 'claim_task',
  description:
    'Claim a pending, unblocked task from the board by id. You then work on it with the tools its kind of task needs; only one task at a time.',
  inputSchema: z.object({ task_id: z.number().int().positive() }),
  async run({ task_id }, ctx) {
    if (ctx.task && ctx.task.status === 'in_progress') {
      return toolError(`you are working on task #${ctx.task.id}; complete it first`);
    }
    const result = await ctx.board.claim(task_id, ctx.agent.name, { role: ctx.agent.role });
    if (!result.ok) return toolError(result.reason);
    // The runtime takes over from here: lease renewal, the task's own tools and its end-of-task rules.
    return {
      content: `Claimed #${task_id}: ${result.task.subject}. You will work on it next.`,
      signal: { kind: 'claimed', task: result.task },
    };
  },
});

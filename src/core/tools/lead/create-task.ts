import { z } from 'zod';
import { defineTool, toolError } from '../tool.js';
import type { LeadServices } from './services.js';

const Input = z
  .object({
    requirement: z.string().min(3).optional().describe('a requirement from the person: starts a requirements → implementation → review pipeline'),
    subject: z.string().min(1).optional().describe('a general task instead: its subject'),
    description: z.string().optional(),
    role: z.string().optional().describe('only teammates with this role may claim it'),
    blocked_by: z.array(z.number().int().positive()).optional().describe('ids that must complete first'),
    require_plan: z.boolean().optional().describe('the teammate must get its plan approved first'),
  })
  .refine((input) => Boolean(input.requirement) !== Boolean(input.subject), { message: 'give exactly one of requirement or subject' });

export const createTaskTool = (lead: LeadServices) =>
  defineTool({
    name: 'create_task',
    description:
      'Post work on the board. With `requirement`: a new pipeline (analyst → engineer → reviewer). With `subject`: one general task, optionally for a role, blocked by other tasks, or requiring plan approval.',
    inputSchema: Input,
    async run(input) {
      try {
        if (input.requirement) {
          const task = await lead.post(input.requirement);
          if (task.status === 'cancelled') return toolError(`Not posted: ${task.result ?? 'blocked by a hook'}`, 'hook_blocked');
          return { content: `Posted pipeline #${task.pipeline}: task #${task.id} (requirements) for the analyst.` };
        }
        const task = await lead.createTask({
          subject: input.subject!,
          description: input.description ?? '',
          role: input.role ?? null,
          blockedBy: input.blocked_by ?? [],
          requirePlan: input.require_plan ?? false,
        });
        if (task.status === 'cancelled') return toolError(`Not posted: ${task.result ?? 'blocked by a hook'}`, 'hook_blocked');
        return { content: `Created task #${task.id}: ${task.subject}${task.blockedBy.length ? ` (blocked by ${task.blockedBy.map((id) => `#${id}`).join(', ')})` : ''}.` };
      } catch (error) {
        return toolError((error as Error).message);
      }
    },
  });

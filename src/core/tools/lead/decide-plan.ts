import { z } from 'zod';
import { defineTool, toolError } from '../tool.js';
import type { LeadServices } from './services.js';

export const decidePlanTool = (lead: LeadServices) =>
  defineTool({
    name: 'plan_approval',
    description: "Approve or reject a teammate's plan (request id from the plan_approval_request), with feedback when rejecting.",
    inputSchema: z.object({ request_id: z.string().min(1), approve: z.boolean(), feedback: z.string().optional() }),
    async run({ request_id, approve, feedback }) {
      try {
        await lead.decidePlan(request_id, approve, feedback);
        return { content: `${approve ? 'Approved' : 'Rejected'} ${request_id}.` };
      } catch (error) {
        return toolError((error as Error).message);
      }
    },
  });

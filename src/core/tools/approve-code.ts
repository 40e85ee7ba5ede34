import { z } from 'zod';
import { defineTool } from './tool.js';

export const approveCodeTool = defineTool({
  name: 'approve_code',
  description: 'Approve the submitted code with a short comment. Ends the pipeline successfully.',
  inputSchema: z.object({ comment: z.string().min(1) }),
  async run({ comment }) {
    return { content: 'Code approved.', signal: { kind: 'transition', tool: 'approve_code', input: { comment } } };
  },
});

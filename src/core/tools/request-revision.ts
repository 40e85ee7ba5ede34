import { z } from 'zod';
import { defineTool } from './tool.js';

export const requestRevisionTool = defineTool({
  name: 'request_revision',
  description: 'Send the code back to the engineer with the list of issues to fix. Ends your review.',
  inputSchema: z.object({ issues: z.array(z.string().min(1)).min(1).describe('one concrete issue per item') }),
  async run({ issues }) {
    return {
      content: `Revision requested (${issues.length} issue${issues.length === 1 ? '' : 's'}).`,
      signal: { kind: 'transition', tool: 'request_revision', input: { issues } },
    };
  },
});

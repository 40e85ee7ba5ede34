import { z } from 'zod';
import { defineTool, toolError } from './tool.js';

export const completeRequirementsAnalysisTool = defineTool({
  name: 'complete_requirements_analysis',
  description: 'Finish the analysis with a summary. Hands the saved requirements to the engineer. Save at least one requirement first.',
  inputSchema: z.object({ summary: z.string().min(1) }),
  async run({ summary }, ctx) {
    if (!ctx.task) return toolError('no requirements task is claimed');
    const saved = ctx.board.get(ctx.task.id).artifacts.requirements as Record<string, string> | undefined;
    if (!saved || Object.keys(saved).length === 0) {
      return toolError('no requirement saved yet: call save_requirement for each requirement first');
    }
    return {
      content: `Requirements analysis complete (${Object.keys(saved).length} requirements). Handed to the engineer.`,
      signal: { kind: 'transition', tool: 'complete_requirements_analysis', input: { summary } },
    };
  },
});

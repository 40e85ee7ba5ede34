import { z } from 'zod';
import { defineTool, toolError } from './tool.js';

/**
 * The signal of a stage defined in autoteam.config.json: the stage's work is done, with a report the
 * next stage reads in its handoff. Where the pipeline goes next is the stage's configuration.
 */
export const completeStageTool = defineTool({
  name: 'complete_stage',
  description: "Finish this stage's work with a short report of what you did. Ends your work on the task; the pipeline moves on.",
  inputSchema: z.object({ report: z.string().min(1).describe('what was done, in a few lines') }),
  async run({ report }, ctx) {
    if (!ctx.task?.stage) return toolError('complete_stage ends a stage task; you have none claimed');
    return {
      content: `Stage ${ctx.task.stage} complete.`,
      signal: { kind: 'transition', tool: 'complete_stage', input: { report }, artifacts: { reports: { ...ctx.task.artifacts.reports, [ctx.task.stage]: report } }, result: report.split('\n')[0]!.slice(0, 200) },
    };
  },
});

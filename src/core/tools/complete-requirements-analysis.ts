import { z } from 'zod';
import { defineTool, toolError } from './tool.js';

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

export const completeRequirementsAnalysisTool = defineTool({
  name: 'complete_requirements_analysis',
  description:
    'Finish the analysis with a summary. Hands the saved requirements and acceptance criteria to the engineer. ' +
    'Needs at least one saved requirement and one acceptance criterion.',
  inputSchema: z.object({ summary: z.string().min(1) }),
  async run({ summary }, ctx) {
    if (!ctx.task) return toolError('no requirements task is claimed');
    const { requirements = {}, criteria = [] } = ctx.board.get(ctx.task.id).artifacts;
    const missing: string[] = [];
    if (Object.keys(requirements).length === 0) missing.push('no requirement saved yet: call save_requirement for each requirement');
    if (criteria.length === 0) missing.push('no acceptance criterion yet: call add_acceptance_criterion for each behaviour the reviewer must verify');
    if (missing.length) return toolError(`Not complete: ${missing.join('; ')}. Then call complete_requirements_analysis again.`, 'refused');
    return {
      content: `Requirements analysis complete (${plural(Object.keys(requirements).length, 'requirement')}, ${plural(criteria.length, 'acceptance criterion', 'acceptance criteria')}). Handed to the engineer.`,
      signal: { kind: 'transition', tool: 'complete_requirements_analysis', input: { summary }, artifacts: { summary }, result: summary },
    };
  },
});

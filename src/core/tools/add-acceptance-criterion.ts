import { z } from 'zod';
import type { Criterion } from '../board/artifacts.js';
import { defineTool, toolError } from './tool.js';

const normalize = (text: string) => text.toLowerCase().replace(/\s+/g, ' ').trim();

export const addAcceptanceCriterionTool = defineTool({
  name: 'add_acceptance_criterion',
  description:
    'Record one acceptance criterion: an observable behaviour the finished program must show, and how a reviewer can verify it ' +
    'by running the program. The runtime numbers them AC1, AC2, …; the reviewer must show each one met before approving. ' +
    'Recording the same criterion again returns its id.',
  inputSchema: z.object({
    criterion: z.string().min(3).max(500).describe('e.g. "An existing file with the same name is never overwritten"'),
    verify: z.string().min(3).max(500).describe('e.g. "organize a scratch folder where Documents/a.pdf exists; both files survive"'),
  }),
  async run({ criterion, verify }, ctx) {
    if (!ctx.task) return toolError('no requirements task is claimed');
    let recorded: Criterion | undefined;
    let existed = false;
    // Numbered under the task's lock, on the criteria as they are then.
    await ctx.record('criterion', `${criterion} (verify: ${verify})`, (artifacts) => {
      const criteria = artifacts.criteria ?? [];
      recorded = criteria.find((c) => normalize(c.criterion) === normalize(criterion));
      existed = recorded !== undefined;
      if (recorded) return artifacts;
      recorded = { id: `AC${criteria.length + 1}`, criterion: criterion.trim(), verify: verify.trim() };
      return { ...artifacts, criteria: [...criteria, recorded] };
    });
    if (!recorded) return toolError('the criterion could not be recorded: the task is no longer yours');
    const { id } = recorded as Criterion;
    if (!existed) ctx.emit?.({ type: 'criterion_added', id, criterion: criterion.trim() });
    return { content: existed ? `Already recorded as ${id}.` : `Recorded ${id}.` };
  },
});

import { z } from 'zod';
import { CriterionVerdictSchema } from '../board/artifacts.js';
import { approvalGaps } from '../stages/verdicts.js';
import { defineTool, toolError } from './tool.js';

export const approveCodeTool = defineTool({
  name: 'approve_code',
  description:
    'Approve the submitted code: ends the pipeline successfully. Give a verdict for every acceptance criterion: ' +
    '{id: "AC1", met: true, evidence: "CHK1 passed: …"}. The runtime refuses the approval unless, in this review and for ' +
    'the submitted version, run_linter and run_tests were run, the tests passed, and every criterion is met with evidence ' +
    '(cited checks must have passed).',
  inputSchema: z.object({
    comment: z.string().min(1).describe('the verdict in a sentence or two, with any minor notes'),
    criteria: z.array(CriterionVerdictSchema).default([]).describe('one entry per acceptance criterion'),
  }),
  async run({ comment, criteria }, ctx) {
    if (!ctx.task) return toolError('no review task is claimed');
    const gaps = approvalGaps(ctx.board.get(ctx.task.id).artifacts, criteria);
    if (gaps.length > 0) {
      return toolError(
        `Approval refused: ${gaps.length} thing${gaps.length === 1 ? '' : 's'} not yet shown:\n${gaps.map((gap) => `- ${gap}`).join('\n')}\n` +
          'Run what is missing, then call approve_code again; or request_revision if the work falls short.',
        'refused',
      );
    }
    return {
      content: 'Code approved.',
      signal: {
        kind: 'transition',
        tool: 'approve_code',
        input: { comment, criteria },
        artifacts: { verdict: 'approved', comment, criteriaVerdicts: criteria },
        result: comment,
      },
    };
  },
});

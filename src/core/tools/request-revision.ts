import { z } from 'zod';
import { type Issue, IssueSchema } from '../board/artifacts.js';
import { revisionRefusal } from '../stages/verdicts.js';
import { defineTool, toolError } from './tool.js';

/** Models often send plain strings: those count as major issues. */
const IssueInput = z.union([IssueSchema, z.string().min(1).transform((text): Issue => ({ text, severity: 'major' }))]);

export const requestRevisionTool = defineTool({
  name: 'request_revision',
  description:
    'Send the code back to the engineer with the issues to fix. Ends your review. Each issue: {text, severity, criterion?}; ' +
    'severity is blocker (wrong or broken: a criterion unmet, tests fail), major (must be fixed: lint errors, missing ' +
    'behaviour) or minor (a nit). Minor issues alone are refused: approve with notes instead.',
  inputSchema: z.object({
    issues: z.array(IssueInput).min(1).describe('one concrete issue per item; a plain string counts as major'),
  }),
  async run({ issues }, ctx) {
    if (!ctx.task) return toolError('no review task is claimed');
    const refusal = revisionRefusal(issues);
    if (refusal) return toolError(refusal, 'refused');
    const count = `${issues.length} issue${issues.length === 1 ? '' : 's'}`;
    return {
      content: `Revision requested (${count}).`,
      signal: {
        kind: 'transition',
        tool: 'request_revision',
        input: { issues },
        artifacts: { verdict: 'changes requested', issues },
        result: `changes requested (${count})`,
      },
    };
  },
});

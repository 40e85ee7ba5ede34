import { z } from 'zod';
import type { ComplexityReport } from '../exec/complexity.js';
import { describeFileError } from '../exec/sandbox-path.js';
import { workspaceFileSha } from './files-artifact.js';
import { defineTool, toolError } from './tool.js';

export const analyzeComplexityTool = defineTool({
  name: 'analyze_complexity',
  description:
    'Measure the complexity of each function in a workspace file (.py, .js, .mjs, .cjs, .ts, .tsx) from its ' +
    'syntax tree: branches, loops, deepest nesting and cyclomatic complexity (1 + decision points), plus ' +
    'code outside functions. Functions over cyclomatic 10 or nesting 4 are flagged (high). A file with a ' +
    'syntax error cannot be analyzed. The report is saved on the task.',
  inputSchema: z.object({
    file: z.string().min(1).describe("File path relative to the workspace, e.g. 'organize.py'"),
  }),
  async run(input, ctx) {
    // Loaded on first use: the TypeScript compiler costs ~60 MB per thread that never reviews.
    const { analyzeComplexity, complexitySummary, formatComplexity } = await import('../exec/complexity.js');
    let report: ComplexityReport;
    try {
      report = await analyzeComplexity(ctx.workspace, input.file, { signal: ctx.signal, sandbox: ctx.sandbox });
    } catch (error) {
      return toolError(describeFileError(error, ctx.workspace, input.file));
    }
    const sha256 = workspaceFileSha(ctx.workspace, report.file) ?? '';
    await ctx.record('analyzed', complexitySummary(report), (current) => ({ ...current, complexity: { ...report, sha256 } }));
    return { content: formatComplexity(report) };
  },
});

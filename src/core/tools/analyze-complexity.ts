import type { ComplexityReport } from '../exec/complexity.js';
import { checkEach, NO_FILES, reviewFiles, reviewFilesInput, storedReport } from './review-files.js';
import { warmProcesses } from '../exec/process.js';
import { defineTool, toolError } from './tool.js';

export const analyzeComplexityTool = defineTool({
  name: 'analyze_complexity',
  description:
    'Measure the complexity of each function in workspace files (.py, .js, .mjs, .cjs, .ts, .tsx) from their ' +
    'syntax trees: branches, loops, deepest nesting and cyclomatic complexity (1 + decision points), plus ' +
    'code outside functions. Functions over cyclomatic 10 or nesting 4 are flagged (high). A file with a ' +
    'syntax error cannot be analyzed. Name a file or files; with neither, the submitted file and the files ' +
    'the branch changed. The report is saved on the task.',
  inputSchema: reviewFilesInput,
  warm: () => Promise.all([warmProcesses(), import('../exec/complexity.js')]),
  async run(input, ctx) {
    // Loaded on first use: the TypeScript compiler costs ~60 MB per thread that never reviews.
    const { analyzeComplexity, complexitySummary, formatComplexity } = await import('../exec/complexity.js');
    const files = reviewFiles(input, ctx);
    if (files.length === 0) return toolError(NO_FILES);
    const reports = await checkEach<ComplexityReport>(files, ctx, (file) => analyzeComplexity(ctx.workspace, file, { signal: ctx.signal, sandbox: ctx.sandbox }));
    if (!Array.isArray(reports)) return reports;
    const stored = { ...storedReport(reports, ctx).stored };
    await ctx.record('analyzed', reports.map((report) => complexitySummary(report)).join('; '), (current) => ({ ...current, complexity: stored }));
    return { content: reports.map((report) => formatComplexity(report)).join('\n\n') };
  },
});

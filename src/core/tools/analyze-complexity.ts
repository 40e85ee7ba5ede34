import type { ComplexityReport } from '../exec/complexity.js';
import { describeFileError } from '../exec/sandbox-path.js';
import { NO_FILES, primaryFile, reviewFiles, reviewFilesInput, shasOf } from './review-files.js';
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
  async run(input, ctx) {
    // Loaded on first use: the TypeScript compiler costs ~60 MB per thread that never reviews.
    const { analyzeComplexity, complexitySummary, formatComplexity } = await import('../exec/complexity.js');
    const files = reviewFiles(input, ctx);
    if (files.length === 0) return toolError(NO_FILES);
    const reports: ComplexityReport[] = [];
    for (const file of files) {
      try {
        reports.push(await analyzeComplexity(ctx.workspace, file, { signal: ctx.signal, sandbox: ctx.sandbox }));
      } catch (error) {
        return toolError(describeFileError(error, ctx.workspace, file));
      }
    }
    const names = reports.map((report) => report.file);
    const primary = primaryFile(names, ctx);
    const main = reports.find((report) => report.file === primary)!;
    const shas = shasOf(names, ctx);
    const others = reports.filter((report) => report !== main);
    const stored = { ...main, sha256: shas[primary] ?? '', shas, ...(others.length ? { others } : {}) };
    await ctx.record('analyzed', reports.map((report) => complexitySummary(report)).join('; '), (current) => ({ ...current, complexity: stored }));
    return { content: reports.map((report) => formatComplexity(report)).join('\n\n') };
  },
});

import type { LintReport } from '../exec/lint.js';
import { checkEach, NO_FILES, reviewFiles, reviewFilesInput, storedReport } from './review-files.js';
import { warmProcesses } from '../exec/process.js';
import { defineTool, toolError } from './tool.js';

export const runLinterTool = defineTool({
  name: 'run_linter',
  description:
    'Lint workspace files and list their problems by line. Python (.py): a real syntax check, missing ' +
    'module docstring, bare `except:`. JavaScript/TypeScript (.js .mjs .cjs .ts .tsx): TypeScript compiler ' +
    'errors (type errors for .ts, syntax for .js) and a missing leading comment. All: lines over 120 ' +
    'characters, trailing whitespace, tab characters. Name a file or files; with neither, the submitted ' +
    'file and the files the branch changed. The report is saved on the task.',
  inputSchema: reviewFilesInput,
  warm: () => Promise.all([warmProcesses(), import('../exec/lint.js')]),
  async run(input, ctx) {
    // Loaded on first use: the TypeScript compiler costs ~60 MB per thread that never reviews.
    const { formatLintReport, lintFile, lintSummary } = await import('../exec/lint.js');
    const files = reviewFiles(input, ctx);
    if (files.length === 0) return toolError(NO_FILES);
    const reports = await checkEach<LintReport>(files, ctx, (file) => lintFile(ctx.workspace, file, { signal: ctx.signal, sandbox: ctx.sandbox }));
    if (!Array.isArray(reports)) return reports;
    const stored = { ...storedReport(reports, ctx).stored, ok: reports.every((report) => report.ok) };
    await ctx.record('linted', reports.map((report) => lintSummary(report)).join('; '), (current) => ({ ...current, lint: stored }));
    return { content: reports.map((report) => formatLintReport(report)).join('\n\n') };
  },
});

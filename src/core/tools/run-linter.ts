import { z } from 'zod';
import type { LintReport } from '../exec/lint.js';
import { describeFileError } from '../exec/sandbox-path.js';
import { workspaceFileSha } from './files-artifact.js';
import { defineTool, toolError } from './tool.js';

export const runLinterTool = defineTool({
  name: 'run_linter',
  description:
    'Lint one workspace file and list its problems by line. Python (.py): a real syntax check, missing ' +
    'module docstring, bare `except:`. JavaScript/TypeScript (.js .mjs .cjs .ts .tsx): TypeScript compiler ' +
    'errors (type errors for .ts, syntax for .js) and a missing leading comment. All: lines over 120 ' +
    'characters, trailing whitespace, tab characters. The report is saved on the task.',
  inputSchema: z.object({
    file: z.string().min(1).describe("File path relative to the workspace, e.g. 'organize.py'"),
  }),
  async run(input, ctx) {
    // Loaded on first use: the TypeScript compiler costs ~60 MB per thread that never reviews.
    const { formatLintReport, lintFile, lintSummary } = await import('../exec/lint.js');
    let report: LintReport;
    try {
      report = await lintFile(ctx.workspace, input.file, { signal: ctx.signal, sandbox: ctx.sandbox });
    } catch (error) {
      return toolError(describeFileError(error, ctx.workspace, input.file));
    }
    const sha256 = workspaceFileSha(ctx.workspace, report.file) ?? '';
    await ctx.record('linted', lintSummary(report), (current) => ({ ...current, lint: { ...report, sha256 } }));
    return { content: formatLintReport(report) };
  },
});

import { z } from 'zod';
import { capOutput } from '../exec/process.js';
import { describeFileError } from '../exec/sandbox-path.js';
import type { TestRunResult } from '../exec/test-runner.js';
import { workspaceFileSha } from './files-artifact.js';
import { defineTool, toolError } from './tool.js';

/** The board keeps a short tail of the output; the model gets the full (capped) text. */
const BOARD_OUTPUT_CHARS = 4_000;

export const runTestsTool = defineTool({
  name: 'run_tests',
  description:
    "Test a workspace file for real and report PASS or FAIL with the program's output. If the workspace has " +
    'tests written for it (Python test_*.py or *_test.py run with unittest; JavaScript *.test.js/.mjs with ' +
    'node --test), those run. Otherwise a smoke run executes a copy of the file in a scratch directory ' +
    'holding sample files (a.txt, b.jpg, c.pdf, d.py), passed as its first argument, and lists the files ' +
    'afterwards. PASS means exit status 0 within the time limit. The result is saved on the task.',
  inputSchema: z.object({
    file: z.string().min(1).describe("The file under test, relative to the workspace, e.g. 'organize.py'"),
  }),
  async run(input, ctx) {
    // Loaded on first use: the TypeScript compiler costs ~60 MB per thread that never reviews.
    const { formatTestResult, runTests, testSummary } = await import('../exec/test-runner.js');
    let result: TestRunResult;
    try {
      result = await runTests(ctx.workspace, input.file, {
        timeoutMs: ctx.limits.commandTimeoutMs,
        maxOutputChars: ctx.limits.maxOutputChars,
        signal: ctx.signal,
        sandbox: ctx.sandbox,
      });
    } catch (error) {
      return toolError(describeFileError(error, ctx.workspace, input.file));
    }
    const stored = { ...result, output: capOutput(result.output, BOARD_OUTPUT_CHARS), sha256: workspaceFileSha(ctx.workspace, result.file) ?? '' };
    await ctx.record('tested', testSummary(result), (current) => ({ ...current, tests: stored }));
    return { content: formatTestResult(result) };
  },
});

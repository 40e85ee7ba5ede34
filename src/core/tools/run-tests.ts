import { capOutput, warmProcesses } from '../exec/process.js';
import type { TestRunResult } from '../exec/test-runner.js';
import { checkEach, NO_FILES, primaryFile, reviewFiles, reviewFilesInput, storedReport } from './review-files.js';
import { defineTool, toolError } from './tool.js';

/** The board keeps a short tail of the output; the model gets the full (capped) text. */
const BOARD_OUTPUT_CHARS = 4_000;

export const runTestsTool = defineTool({
  name: 'run_tests',
  description:
    "Test workspace files for real and report PASS or FAIL with the program's output. On a repository with " +
    "its own tests (an npm test script, or a tests/ folder of Python tests), the project's tests run, once. " +
    'Otherwise, per file: tests written for it (Python test_*.py or *_test.py run with unittest; JavaScript ' +
    '*.test.js/.mjs with node --test), or else a smoke run that executes a copy of the file in a scratch ' +
    'directory holding sample files (a.txt, b.jpg, c.pdf, d.py), passed as its first argument. PASS means ' +
    'exit status 0 within the time limit. Name a file or files; with neither, the submitted file and the ' +
    'files the branch changed. The result is saved on the task.',
  inputSchema: reviewFilesInput,
  warm: () => Promise.all([warmProcesses(), import('../exec/test-runner.js')]),
  async run(input, ctx) {
    // Loaded on first use: the TypeScript compiler costs ~60 MB per thread that never reviews.
    const { formatTestResult, projectTestCommand, runTests, testSummary } = await import('../exec/test-runner.js');
    const project = Boolean(ctx.task?.artifacts.git) && projectTestCommand(ctx.workspace) !== null;
    const named = reviewFiles(input, ctx, project);
    if (named.length === 0) return toolError(NO_FILES);
    // The project's suite covers every file: it runs once, filed under the submitted (or first) file.
    const files = project ? [primaryFile(named, ctx)] : named;
    const options = { timeoutMs: ctx.limits.commandTimeoutMs, maxOutputChars: ctx.limits.maxOutputChars, signal: ctx.signal, sandbox: ctx.sandbox, project };
    const results = await checkEach<TestRunResult>(files, ctx, (file) => runTests(ctx.workspace, file, options));
    if (!Array.isArray(results)) return results;
    const { main, others, stored: report } = storedReport(results, ctx, project ? named : undefined);
    const stored = {
      ...report,
      ok: results.every((result) => result.ok),
      output: capOutput(main.output, BOARD_OUTPUT_CHARS),
      ...(others.length ? { others: others.map((result) => ({ ...result, output: capOutput(result.output, 1_000) })) } : {}),
    };
    await ctx.record('tested', results.map((result) => testSummary(result)).join('; '), (current) => ({ ...current, tests: stored }));
    return { content: results.map((result) => formatTestResult(result)).join('\n\n') };
  },
});

import { z } from 'zod';

import { describeExit, formatProcessResult, warmProcesses } from '../exec/process.js';
import { defineTool, toolError } from './tool.js';

export const executeCodeTool = defineTool({
  name: 'execute_code',
  description:
    'Run a code snippet and return its exit status, stdout and stderr. Python runs with python3, JavaScript ' +
    'with node (ES module unless it uses require), TypeScript is transpiled without type checking. The working ' +
    'directory is the workspace, so the snippet can read the files you wrote. Limits: a timeout, long output ' +
    'is cut, stdin is empty, no API keys in the environment. If `language` is omitted it is guessed ' +
    '(Python when the code looks like Python, else JavaScript).',
  inputSchema: z.object({
    code: z.string().min(1).describe('The complete program to run'),
    language: z.enum(['python', 'javascript', 'typescript']).optional().describe('Defaults to a guess from the code'),
  }),
  warm: () => Promise.all([warmProcesses(), import('../exec/execute.js')]),
  async run(input, ctx) {
    // Loaded on first use: the TypeScript compiler costs ~60 MB per thread that never reviews.
    const { executeCode } = await import('../exec/execute.js');
    const timeoutMs = ctx.limits.commandTimeoutMs;
    let result;
    try {
      result = await executeCode(ctx.workspace, input.code, {
        language: input.language,
        timeoutMs,
        maxOutputChars: ctx.limits.maxOutputChars,
        signal: ctx.signal,
        sandbox: ctx.sandbox,
      });
    } catch (error) {
      return toolError(`could not run the code: ${error instanceof Error ? error.message : String(error)}`);
    }
    await ctx.record('executed', `${result.language} → ${describeExit(result)}`);
    const text = `[${result.language}] ${formatProcessResult(result, timeoutMs)}`;
    if (result.timedOut) return toolError(text, 'timeout');
    if (result.limit) return toolError(text, 'limit');
    return result.error ? toolError(text, 'execution_failed') : { content: text };
  },
});

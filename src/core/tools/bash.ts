import fs from 'node:fs';
import { z } from 'zod';
import { describeExit, formatProcessResult, runProcess, warmProcesses } from '../exec/process.js';
import { defineTool, toolError } from './tool.js';

const DETAIL_COMMAND_CHARS = 160;

export const bashTool = defineTool({
  name: 'bash',
  description:
    'Run a shell command with `bash -c` in the workspace directory and return its exit status, stdout and ' +
    'stderr. Limits: a wall-clock timeout (the command and everything it started are killed), background ' +
    'processes are stopped when the command ends (no servers), long output is cut, stdin is empty (no ' +
    'interactive programs), memory, file size and CPU time are limited, and the environment holds only PATH, ' +
    'the locale and a private HOME. Under the sandbox only the workspace is writable and there is no network. ' +
    'Keep every file you create or change inside the workspace; use relative paths.',
  inputSchema: z.object({
    command: z.string().min(1).describe("The command line, e.g. 'ls -la' or 'python3 organize.py --help'"),
  }),
  warm: warmProcesses,
  async run(input, ctx) {
    fs.mkdirSync(ctx.workspace, { recursive: true });
    const timeoutMs = ctx.limits.commandTimeoutMs;
    const result = await runProcess('bash', ['-c', input.command], {
      cwd: ctx.workspace,
      timeoutMs,
      maxOutputChars: ctx.limits.maxOutputChars,
      signal: ctx.signal,
      sandbox: ctx.sandbox,
    });
    const shown = input.command.length > DETAIL_COMMAND_CHARS ? `${input.command.slice(0, DETAIL_COMMAND_CHARS)}…` : input.command;
    await ctx.record('ran', `${shown.replace(/\s*\n\s*/g, ' ⏎ ')} → ${describeExit(result)}`);
    const text = formatProcessResult(result, timeoutMs);
    if (result.timedOut) return toolError(text, 'timeout');
    if (result.limit) return toolError(text, 'limit');
    return result.error ? toolError(text, 'execution_failed') : { content: text };
  },
});

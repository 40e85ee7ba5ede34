import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import type { Check } from '../board/artifacts.js';
import { capOutput, describeExit, formatProcessResult, warmProcesses } from '../exec/process.js';
import { workspaceFileSha } from './files-artifact.js';
import { defineTool, toolError } from './tool.js';
import { scratchDir } from '../exec/scratch.js';

/** The board keeps this much of a check's code and output; the model gets the full (capped) output. */
const BOARD_CODE_CHARS = 4_000;
const BOARD_OUTPUT_CHARS = 2_000;
const SKIPPED = new Set(['.git', '.run', 'node_modules', '__pycache__']);

export const runCheckTool = defineTool({
  name: 'run_check',
  description:
    'Run a check you write against the submitted program: a short Python or JavaScript script that runs it (e.g. with ' +
    'subprocess on a scratch folder it creates) or imports it, and exits non-zero when what it checks does not hold. It ' +
    'runs in a scratch copy of the workspace (the working directory holds the engineer\'s files), so it can never change ' +
    'them. Its exit code and output are recorded on the task as evidence CHK1, CHK2, …, which approve_code can cite.',
  inputSchema: z.object({
    code: z.string().min(1).describe('the complete check script'),
    language: z.enum(['python', 'javascript']).optional().describe('defaults to a guess from the code'),
  }),
  warm: () => Promise.all([warmProcesses(), import('../exec/execute.js')]),
  async run(input, ctx) {
    if (!ctx.task) return toolError('no review task is claimed');
    const submitted = ctx.task.artifacts.submitted;
    const { executeCode, guessLanguage } = await import('../exec/execute.js');
    const scratch = scratchDir('check');
    let result;
    try {
      // Symbolic links stay behind: cpSync would point them back into the real workspace.
      fs.cpSync(ctx.workspace, scratch, { recursive: true, filter: (src) => !SKIPPED.has(path.basename(src)) && !fs.lstatSync(src).isSymbolicLink() });
      result = await executeCode(scratch, input.code, {
        language: input.language ?? (guessLanguage(input.code) === 'python' ? 'python' : 'javascript'),
        timeoutMs: ctx.limits.commandTimeoutMs,
        maxOutputChars: ctx.limits.maxOutputChars,
        signal: ctx.signal,
        sandbox: ctx.sandbox.forWorkspace(scratch),
      });
    } catch (error) {
      return toolError(`could not run the check: ${error instanceof Error ? error.message : String(error)}`);
    } finally {
      // Off the event loop: the teammates that share the thread do not wait for the removal.
      await fs.promises.rm(scratch, { recursive: true, force: true });
    }
    const ok = result.exitCode === 0 && !result.timedOut && !result.error && !result.canceled;
    const output = [result.stdout, result.stderr].filter(Boolean).join('\n') || result.error || '(no output)';
    let id = '';
    const expected = `CHK${(ctx.board.get(ctx.task.id).artifacts.checks?.length ?? 0) + 1}`;
    await ctx.record('checked', `${expected}: ${ok ? 'PASS' : 'FAIL'} (${describeExit(result)})`, (artifacts) => {
      const checks = artifacts.checks ?? [];
      id = `CHK${checks.length + 1}`;
      const check: Check = {
        id,
        language: result.language,
        code: capOutput(input.code, BOARD_CODE_CHARS),
        ok,
        exitCode: result.exitCode,
        output: capOutput(output, BOARD_OUTPUT_CHARS),
        sha256: (submitted && workspaceFileSha(ctx.workspace, submitted.file)) ?? '',
        ms: result.durationMs,
      };
      return { ...artifacts, checks: [...checks, check] };
    });
    if (!id) return toolError('the check ran but could not be recorded: the task is no longer yours');
    ctx.emit?.({ type: 'check_ran', id, ok, exitCode: result.exitCode, language: result.language });
    return { content: `${id}: ${ok ? 'PASS' : 'FAIL'} [${result.language}] ${formatProcessResult(result, ctx.limits.commandTimeoutMs)}` };
  },
});

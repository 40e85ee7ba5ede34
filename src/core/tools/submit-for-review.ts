import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { defineTool, toolError } from './tool.js';

export const submitForReviewTool = defineTool({
  name: 'submit_for_review',
  description: 'Submit the main file you wrote for review. Ends your work on this task; the reviewer takes it from here.',
  inputSchema: z.object({ file: z.string().min(1).describe('path relative to the workspace') }),
  async run({ file }, ctx) {
    const full = path.resolve(ctx.workspace, file);
    if (!full.startsWith(ctx.workspace + path.sep) || !fs.existsSync(full) || !fs.statSync(full).isFile()) {
      const present = fs.existsSync(ctx.workspace)
        ? fs.readdirSync(ctx.workspace).filter((name) => !name.startsWith('.')).join(', ')
        : '';
      return toolError(`no file '${file}' in the workspace (files: ${present || 'none'}); write it first`);
    }
    return {
      content: `Submitted ${file} for review.`,
      signal: { kind: 'transition', tool: 'submit_for_review', input: { file: path.relative(ctx.workspace, full) } },
    };
  },
});

import fs from 'node:fs';
import { z } from 'zod';
import { describeFileError, listWorkspaceFiles, resolveInWorkspace, workspaceRelative } from '../exec/sandbox-path.js';
import { defineTool, toolError } from './tool.js';

export const submitForReviewTool = defineTool({
  name: 'submit_for_review',
  description: 'Submit the main file you wrote for review. Ends your work on this task; the reviewer takes it from here.',
  inputSchema: z.object({ file: z.string().min(1).describe('path relative to the workspace') }),
  async run({ file }, ctx) {
    let full: string;
    try {
      // The same confinement as read_file: no absolute paths, no '..', no symlink out of the workspace.
      full = resolveInWorkspace(ctx.workspace, file);
    } catch (error) {
      return toolError(describeFileError(error, ctx.workspace, file));
    }
    if (!fs.existsSync(full) || !fs.statSync(full).isFile()) {
      const present = fs.existsSync(ctx.workspace) ? listWorkspaceFiles(ctx.workspace, 50).join(', ') : '';
      return toolError(`no file '${file}' in the workspace (files: ${present || 'none'}); write it first`);
    }
    return {
      content: `Submitted ${file} for review.`,
      signal: { kind: 'transition', tool: 'submit_for_review', input: { file: workspaceRelative(ctx.workspace, full) } },
    };
  },
});

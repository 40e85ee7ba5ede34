import fs from 'node:fs';
import { z } from 'zod';
import { capOutput } from '../exec/process.js';
import { assertPlainFile, describeFileError, fileErrorKind, listWorkspaceFiles, resolveInWorkspace, workspaceRelative } from '../exec/sandbox-path.js';
import { defineTool, toolError } from './tool.js';
import { counted } from '../words.js';

export const readFileTool = defineTool({
  name: 'read_file',
  description:
    'Read a text file from the workspace and return its exact content. `path` is relative to the workspace ' +
    "(e.g. 'organize.py'); absolute paths, '..' and symlinks leading outside are refused. A directory " +
    'returns a list of the files under it. Very long files are cut in the middle, with a note saying how much.',
  inputSchema: z.object({
    path: z.string().min(1).describe("File path relative to the workspace, e.g. 'organize.py'"),
  }),
  async run(input, ctx) {
    try {
      const abs = resolveInWorkspace(ctx.workspace, input.path, ctx.offLimits);
      assertPlainFile(abs, input.path);
      const stat = fs.statSync(abs);
      const rel = workspaceRelative(ctx.workspace, abs);
      if (stat.isDirectory()) {
        const prefix = rel === '.' ? '' : `${rel}/`;
        const files = listWorkspaceFiles(ctx.workspace, 10_000, ctx.offLimits).filter((f) => f.startsWith(prefix)).slice(0, 200);
        return { content: `${rel} is a directory. Files: ${files.length ? files.join(', ') : '(none)'}` };
      }
      const buffer = fs.readFileSync(abs);
      if (buffer.includes(0)) return { content: `${rel} is a binary file (${buffer.length} bytes); its content is not shown.` };
      const text = buffer.toString('utf8');
      if (text.length === 0) return { content: `(${rel} is empty)` };
      // A person sees which file was read, not its first line (`import argparse`, a conflict marker).
      const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
      return { content: capOutput(text, ctx.limits.maxOutputChars), display: `${rel} (${counted(lines, 'line')})` };
    } catch (error) {
      return toolError(describeFileError(error, ctx.workspace, input.path, ctx.offLimits), fileErrorKind(error));
    }
  },
});

import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { assertPlainFile, describeFileError, fileErrorKind, resolveInWorkspace, workspaceRelative } from '../exec/sandbox-path.js';
import { type FileArtifact, fileArtifact, withFileArtifact } from './files-artifact.js';
import { defineTool, toolError } from './tool.js';

export const writeFileTool = defineTool({
  name: 'write_file',
  description:
    'Create or overwrite a file in the workspace with `content` (the whole file), creating folders as ' +
    "needed. `path` is relative to the workspace (e.g. 'organize.py'); paths leading outside it are refused. " +
    'The file is recorded on the task (path, size, sha256) for the reviewer. To change part of an existing ' +
    'file, edit_file is cheaper.',
  inputSchema: z.object({
    path: z.string().min(1).describe("File path relative to the workspace, e.g. 'organize.py'"),
    content: z.string().describe('The complete new content of the file'),
  }),
  async run(input, ctx) {
    const lost = ctx.claimLost?.();
    if (lost) return toolError(lost);
    let rel: string;
    let bytes: number;
    let entry: FileArtifact;
    try {
      fs.mkdirSync(ctx.workspace, { recursive: true });
      const abs = resolveInWorkspace(ctx.workspace, input.path, ctx.offLimits);
      assertPlainFile(abs, input.path);
      if (fs.existsSync(abs) && fs.statSync(abs).isDirectory()) {
        return toolError(`'${input.path}' is a directory; give a file path inside it`);
      }
      fs.mkdirSync(path.dirname(abs), { recursive: true });
      fs.writeFileSync(abs, input.content);
      rel = workspaceRelative(ctx.workspace, abs);
      entry = fileArtifact(rel, input.content);
      bytes = entry.bytes;
    } catch (error) {
      return toolError(describeFileError(error, ctx.workspace, input.path, ctx.offLimits), fileErrorKind(error));
    }
    await ctx.record('wrote', `${rel} (${bytes} bytes)`, withFileArtifact(entry));
    return { content: `wrote ${rel} (${bytes} bytes)` };
  },
});

import fs from 'node:fs';
import { z } from 'zod';
import { assertPlainFile, describeFileError, fileErrorKind, resolveInWorkspace, workspaceRelative } from '../exec/sandbox-path.js';
import { fileArtifact, withFileArtifact } from './files-artifact.js';
import { defineTool, toolError } from './tool.js';

function countMatches(text: string, needle: string): number {
  let count = 0;
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + needle.length)) count += 1;
  return count;
}

export const editFileTool = defineTool({
  name: 'edit_file',
  description:
    'Replace one exact piece of text in a workspace file: `old_text` must occur exactly once in the file ' +
    '(whitespace and indentation count); it is replaced by `new_text`. If it occurs zero or several times ' +
    'nothing changes and the error says how many matches there were: read the file and include more ' +
    'surrounding lines. Paths are relative to the workspace.',
  inputSchema: z.object({
    path: z.string().min(1).describe("File path relative to the workspace, e.g. 'organize.py'"),
    old_text: z.string().min(1).describe('Exact text to replace; must occur exactly once'),
    new_text: z.string().describe('Replacement text (may be empty to delete)'),
  }),
  async run(input, ctx) {
    const lost = ctx.claimLost?.();
    if (lost) return toolError(lost);
    let rel: string;
    let updated: string;
    try {
      const abs = resolveInWorkspace(ctx.workspace, input.path, ctx.offLimits);
      assertPlainFile(abs, input.path);
      rel = workspaceRelative(ctx.workspace, abs);
      const text = fs.readFileSync(abs, 'utf8');
      const matches = countMatches(text, input.old_text);
      if (matches !== 1) {
        return toolError(
          matches === 0
            ? `old_text was not found in ${rel} (0 matches); nothing changed. Read the file and copy the text exactly, whitespace included.`
            : `old_text matches ${matches} places in ${rel}; nothing changed. Include more surrounding lines so it matches exactly once.`,
        );
      }
      const at = text.indexOf(input.old_text);
      updated = text.slice(0, at) + input.new_text + text.slice(at + input.old_text.length);
      fs.writeFileSync(abs, updated);
    } catch (error) {
      return toolError(describeFileError(error, ctx.workspace, input.path, ctx.offLimits), fileErrorKind(error));
    }
    const entry = fileArtifact(rel, updated);
    await ctx.record('edited', `${rel} (${entry.bytes} bytes)`, withFileArtifact(entry));
    return { content: `edited ${rel}: replaced 1 occurrence (${entry.bytes} bytes now)` };
  },
});

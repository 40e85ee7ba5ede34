import fs from 'node:fs';
import path from 'node:path';
import { assertPlainFile, resolveInWorkspace, workspaceRelative } from '../exec/sandbox-path.js';
import type { ToolUseBlock } from '../model/types.js';
import { cutText } from '../sizes.js';

/**
 * Where whole tool outputs are kept: under the workspace's private TMPDIR, which is never part of a
 * submission or a commit.
 */
const OUTPUT_DIR = '.tmp/tool-output';

/**
 * A tool result as it joins the conversation: whole when it is at most a quarter of the request
 * ceiling (`maxRequestTokens` characters, at 4 characters a token), else its start and end with a
 * note naming the workspace file that holds the whole (already redacted), so the model can read the
 * part it needs. The file is written through the workspace's confinement, like write_file.
 */
export function keepToolOutput(content: string, use: Pick<ToolUseBlock, 'id' | 'name'>, workspace: string, maxRequestTokens: number): string {
  const maxChars = maxRequestTokens;
  if (content.length <= maxChars) return content;
  const name = `${safeName(use.name)}-${safeName(use.id)}.txt`;
  let where: string;
  try {
    const abs = resolveInWorkspace(workspace, `${OUTPUT_DIR}/${name}`);
    fs.mkdirSync(path.dirname(abs), { recursive: true });
    // mkdir may have followed a link planted since: check the folder again before writing.
    resolveInWorkspace(workspace, `${OUTPUT_DIR}/${name}`);
    assertPlainFile(abs, `${OUTPUT_DIR}/${name}`);
    fs.writeFileSync(abs, content);
    where = `the whole is in ${workspaceRelative(workspace, abs)} in the workspace`;
  } catch (error) {
    where = `the whole was not kept (${(error as Error).message})`;
  }
  return cutText(content, maxChars, where, { tail: Math.floor(maxChars / 4) });
}

function safeName(value: string): string {
  return value.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64) || 'output';
}

import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { z } from 'zod';
import type { Submitted } from '../board/artifacts.js';
import { assertPlainFile, describeFileError, fileErrorKind, listWorkspaceFiles, resolveInWorkspace, workspaceRelative } from '../exec/sandbox-path.js';
import { worktreeChange } from '../git/worktree.js';
import { sameManifest, snapshotWorkspace, uploadBlobs } from '../stages/submission.js';
import { defineTool, toolError } from './tool.js';

export const submitForReviewTool = defineTool({
  name: 'submit_for_review',
  description:
    'Submit the main file you wrote for review (the other files of the workspace go along). Ends your work on this task; ' +
    'the reviewer takes it from here. A revision that changes nothing since the version sent back is refused.',
  inputSchema: z.object({ file: z.string().min(1).describe('path relative to the workspace') }),
  async run({ file }, ctx) {
    if (!ctx.task) return toolError('no implementation task is claimed');
    let full: string;
    try {
      // The same confinement as read_file: no absolute paths, no '..', no symlink out of the workspace.
      full = resolveInWorkspace(ctx.workspace, file);
      assertPlainFile(full, file);
    } catch (error) {
      return toolError(describeFileError(error, ctx.workspace, file), fileErrorKind(error));
    }
    if (!fs.existsSync(full) || !fs.statSync(full).isFile()) {
      const present = fs.existsSync(ctx.workspace) ? listWorkspaceFiles(ctx.workspace, 50).join(', ') : '';
      return toolError(`no file '${file}' in the workspace (files: ${present || 'none'}); write it first`);
    }
    const rel = workspaceRelative(ctx.workspace, full);
    const git = ctx.task.artifacts.git;
    // On a repository the submission is what the branch changed (the rest is the person's code).
    const changed = git ? (await worktreeChange(ctx.workspace, git.base, 0)).files.filter((f) => f.status !== 'D').map((f) => f.path) : undefined;
    const files = snapshotWorkspace(ctx.rootDir, ctx.workspace, changed);
    // Through the board, so a reviewer with its own folder (another machine) gets the same files.
    if (ctx.blobs) await uploadBlobs(ctx.rootDir, files, ctx.blobs);
    const sentBack = ctx.task.artifacts.submitted;
    if (ctx.task.revision > 0 && sentBack?.files && sameManifest(sentBack.files, files)) {
      return toolError(
        `Nothing changed since revision ${sentBack.revision}: every file is byte-identical to the version the reviewer sent back. ` +
          'Fix the issues listed in the handoff first; if you cannot, fail_task(reason) says so.',
        'refused',
      );
    }
    const sha256 = createHash('sha256').update(fs.readFileSync(full)).digest('hex');
    const submitted: Submitted = { file: rel, sha256, revision: ctx.task.revision, files };
    return {
      content: `Submitted ${rel} for review.`,
      signal: { kind: 'transition', tool: 'submit_for_review', input: { file: rel }, artifacts: { submitted }, result: `submitted ${rel}` },
    };
  },
});

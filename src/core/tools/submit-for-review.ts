import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { z } from 'zod';
import type { Artifacts, Submitted } from '../board/artifacts.js';
import { RemoteError } from '../git/remote.js';
import { pushSubmission } from '../git/remote-branch.js';
import { assertPlainFile, describeFileError, fileErrorKind, listWorkspaceFiles, resolveInWorkspace, workspaceRelative } from '../exec/sandbox-path.js';
import { ignoredByThisMachine, worktreeChange } from '../git/worktree.js';
import { namedFiles } from '../git/in-the-way.js';
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
        `Nothing changed since revision ${sentBack.revision}: every file is byte-identical to the version that was sent back (by its review, or by the merge queue). ` +
          'Fix the issues listed in the handoff first; if you cannot, fail_task(reason) says so.',
        'refused',
      );
    }
    const sha256 = createHash('sha256').update(fs.readFileSync(full)).digest('hex');
    const submitted: Submitted = { file: rel, sha256, revision: ctx.task.revision, files };
    let pushed = '';
    const artifacts: Artifacts = { submitted };
    if (git?.remote) {
      // The branch lives on a remote: the work is committed and pushed, and the review names that very commit.
      try {
        const head = await pushSubmission(ctx.workspace, git, `Submitted ${rel} for review (revision ${ctx.task.revision})\n`, `${ctx.agent.role}@${ctx.agent.team}`);
        artifacts.git = { ...git, head };
        pushed = ` as ${head.slice(0, 12)} on ${git.branch}`;
      } catch (error) {
        const message = (error as Error).message;
        // Someone else moved the branch, or the remote turns such pushes down (a hook): no retry of this task can push, so it ends (the lead hears why).
        if (error instanceof RemoteError && (error.kind === 'moved' || error.kind === 'refused')) return { content: message, isError: true, kind: 'error', signal: { kind: 'fail', reason: message } };
        return toolError(`${message} — nothing was submitted; call submit_for_review again, or fail_task(reason) if the remote stays away`);
      }
    }
    // A file a rule of this machine ignores is tested in review but never committed: said, not lost in silence.
    const ignored = git ? await ignoredByThisMachine(ctx.workspace) : [];
    const left = ignored.length ? `; left out of the change: ${namedFiles(ignored.map(({ file, rule }) => `${file} (ignored by ${rule}, a rule of this machine, not of the repository)`))}, so the approval does not commit ${ignored.length === 1 ? 'it' : 'them'}` : '';
    return {
      content: `Submitted ${rel} for review${pushed}${left}.`,
      signal: { kind: 'transition', tool: 'submit_for_review', input: { file: rel }, artifacts, result: `submitted ${rel}${pushed}${left}` },
    };
  },
});

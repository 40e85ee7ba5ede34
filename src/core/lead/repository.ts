import fs from 'node:fs';
import path from 'node:path';
import { ConfigError } from '../errors.js';
import { OWN_PACKAGE } from '../own-package.js';
import { excludeBoard, findRepository, prepareRepository, type Repository } from '../git/worktree.js';
import { openRemote, type RepositorySettings } from '../git/remote-branch.js';
import { uncommittedInstructions } from '../git/agents-md.js';

/** Said when autoMerge is set where pipelines have no branches (no repository, or --no-worktree): it has nothing to merge. */
export const AUTO_MERGE_WITHOUT_BRANCHES = 'autoMerge of autoteam.config.json does nothing here: pipelines work in workspace/<n>, not on branches (no git repository, or --no-worktree), so nothing is merged';

/**
 * Repository mode: the person's repository pipelines get a worktree and branch on, or null. `repo`
 * is `--repo` (false: `--no-worktree`); a `--repo` that is not a repository with a commit is an
 * error, while a board that merely is not in one works in `workspace/`. `notice` says which it is.
 * With `remote` (`repository.remote`) the branches live on that remote, through this folder's clone.
 */
export async function openRepository(repo: string | false | undefined, rootDir: string, notice: (text: string) => void, remote?: RepositorySettings, { instructions = true } = {}): Promise<Repository | null> {
  if (repo === false) {
    // Not worked as a repository, but a board in one is kept out of `git status` all the same (a `git add -A` does not commit it).
    const found = await findRepository(rootDir).catch(() => null);
    const top = found?.repo ? (isOwnSource(found.repo.top) ? undefined : found.repo.top) : found?.top;
    if (top) await excludeBoard(top, rootDir).catch((error: Error) => notice(`could not keep the board out of git status (${error.message})`));
    return null;
  }
  if (remote) {
    if (repo !== undefined) throw new ConfigError('--repo and a remote (--remote, repository.remote) contradict each other: give one');
    // Across machines: each folder works its own clone of the remote; the branches live there.
    const opened = await openRemote(rootDir, remote).catch((error: Error) => {
      throw new ConfigError(error.message);
    });
    notice(`on the remote ${opened.remote!.shown} (${opened.branch} at ${opened.head.slice(0, 7)}): each pipeline gets a branch autoteam/<n>-… there, pushed as it goes`);
    return opened;
  }
  const found = repo !== undefined ? { repo: await repositoryAt(repo) } : await findRepository(rootDir);
  if (!found.repo) {
    if (found.top) {
      // Kept out of `git status` even now, so a first `git add -A` does not commit the board.
      await prepareRepository({ top: found.top }, rootDir);
      notice(`${found.reason}: pipelines work in workspace/ (commit once to get a branch per pipeline)`);
    }
    return null;
  }
  if (repo === undefined && isOwnSource(found.repo.top)) {
    // `npm start` in a clone of autoteam: generated code must not become branches of the tool itself.
    notice(`${found.repo.top} is autoteam's own repository: pipelines work in workspace/ (--repo ${found.repo.top} uses it anyway)`);
    return null;
  }
  await prepareRepository(found.repo, rootDir);
  const { top, branch, head, dirty } = found.repo;
  notice(`on your repository ${top} (${branch ?? 'detached HEAD'} at ${head.slice(0, 7)}): each pipeline works in its own worktree and branch autoteam/<n>-…`);
  if (dirty) notice('your working tree has uncommitted changes: pipelines start from HEAD and do not see them');
  // Said now, not first at the merge: an approved pipeline would wait in the queue with no branch to go into.
  if (!branch) notice(`HEAD is detached: pipelines start from ${head.slice(0, 7)}, and their work is merged into a branch, so check one out before merging (autoteam merge, /merge, the merge queue)`);
  // The teammates read AGENTS.md as committed: one just written would be followed by nobody, unsaid.
  const loose = instructions ? await uncommittedInstructions(top).catch(() => null) : null;
  if (loose) notice(loose);
  return found.repo;
}

/** The repository a `--repo` path names, or an error naming it (the CLI asks before it opens a board, so a wrong path leaves nothing behind). */
export async function repositoryAt(repo: string): Promise<Repository> {
  if (!repo.trim()) throw new ConfigError('--repo needs the path of a git repository');
  const found = await findRepository(path.resolve(repo));
  if (!found.repo) throw new ConfigError(`--repo ${repo}: ${found.reason}`);
  return found.repo;
}

function isOwnSource(top: string): boolean {
  const real = (dir: string) => {
    try {
      return fs.realpathSync(dir);
    } catch {
      return dir;
    }
  };
  return real(top) === real(OWN_PACKAGE.root) && fs.existsSync(path.join(OWN_PACKAGE.root, 'src', 'core', 'lead', 'repository.ts'));
}

import fs from 'node:fs';
import path from 'node:path';
import { AutoteamError } from '../errors.js';
import { git, GitError, gitMessage, identityEnv, operationInProgress, personEnv } from './git.js';
import { changesInTheWay, namedFiles, untrackedInTheWay } from './in-the-way.js';
import { scratchDir } from '../exec/scratch.js';
import { TRUSTED_FILES } from '../config/trusted-files.js';

/**
 * The person's repository as the workplace: one worktree and branch per pipeline, created from HEAD,
 * committed on approval, merged or discarded by the person. Every function runs the real git CLI; the
 * person's own branch, index and working tree are only ever touched by `mergeBranch`, on request.
 */

export interface Repository {
  /** The top level of the person's working tree. */
  top: string;
  /** The commit HEAD points to now. */
  head: string;
  /** The checked-out branch, or null when HEAD is detached. */
  branch: string | null;
  /** Uncommitted changes in the person's working tree (pipelines start from HEAD without them). */
  dirty: boolean;
  /**
   * `repository.remote`: pipelines branch from `base` of this remote and push there; `top` is then
   * this folder's bare clone of it. `url` is as configured (it may hold credentials: never stored or
   * shown), `shown` redacted.
   */
  remote?: { url: string; shown: string; base: string };
}

/** Files the runtime makes inside a workspace (a private HOME, TMPDIR, snippets): never part of a change. */
export const RUNTIME_FILES = ['.home', '.tmp', '.run'];
/**
 * autoteam's trusted files in any folder, in any case (a disk that ignores case, as macOS's do, reads
 * `.ENV` as `.env`), and what is under a folder of that name: never part of a pipeline's change.
 */
const TRUSTED_PATHSPEC = TRUSTED_FILES.flatMap((name) => [`:(glob,icase)**/${name}`, `:(glob,icase)**/${name}/**`]);
/**
 * What a pipeline's change is made of: everything in its worktree but the runtime's files, and but
 * autoteam's trusted files (TRUSTED_FILES: a `.env` or config the agents wrote would be loaded, once
 * merged, when autoteam next starts in that folder).
 */
const PATHSPEC = ['--', '.', ...RUNTIME_FILES.map((name) => `:(exclude,top)${name}`), ...TRUSTED_PATHSPEC.map((spec) => spec.replace(':(', ':(exclude,'))];

/** The board's own files, kept out of `git status` of the person's repository. */
export const BOARD_ENTRIES = ['.tasks/', '.team/', '.autoteam/', 'workspace/'];

/**
 * The repository `dir` is in, or null (with why) when it is not inside a git work tree, the work tree
 * has no commit yet, or git is missing.
 */
export async function findRepository(dir: string): Promise<{ repo: Repository } | { repo: null; reason: string; top?: string }> {
  const stat = fs.statSync(dir, { throwIfNoEntry: false });
  if (!stat) return { repo: null, reason: `${dir} does not exist` };
  if (!stat.isDirectory()) return { repo: null, reason: `${dir} is not a directory` };
  const top = await git(dir, ['rev-parse', '--show-toplevel'], { allowFailure: true }).catch((error: GitError) => ({ exitCode: 1, stdout: '', stderr: error.detail }));
  if (top.exitCode !== 0) return { repo: null, reason: /not installed/.test(top.stderr) ? 'git is not installed' : `${dir} is not inside a git repository` };
  const root = top.stdout.trim();
  const head = await git(root, ['rev-parse', '--verify', '-q', 'HEAD'], { allowFailure: true });
  if (head.exitCode !== 0) return { repo: null, reason: `the repository at ${root} has no commit yet`, top: root };
  const branch = await git(root, ['symbolic-ref', '--short', '-q', 'HEAD'], { allowFailure: true });
  const status = await git(root, ['status', '--porcelain', '--untracked-files=no']);
  return { repo: { top: root, head: head.stdout.trim(), branch: branch.exitCode === 0 ? branch.stdout.trim() : null, dirty: status.stdout.trim() !== '' } };
}

/**
 * Keeps the board out of `git status` (its folders go to `.git/info/exclude`, relative to where the
 * board is) and forgets worktrees whose folders are gone.
 */
export async function prepareRepository(repo: Pick<Repository, 'top'>, boardRoot: string): Promise<void> {
  await excludeBoard(repo.top, boardRoot);
  await git(repo.top, ['worktree', 'prune']);
}

/** The board's folders under `boardRoot`, appended once to the repository's `.git/info/exclude`: kept out of `git status`. */
export async function excludeBoard(top: string, boardRoot: string): Promise<void> {
  const excludeFile = path.resolve(top, (await git(top, ['rev-parse', '--git-path', 'info/exclude'])).stdout.trim());
  const relative = path.relative(fs.realpathSync(top), fs.realpathSync(boardRoot)).split(path.sep).join('/');
  if (!relative.startsWith('..') && !path.isAbsolute(relative)) {
    const prefix = relative ? `/${relative}/` : '/';
    const wanted = BOARD_ENTRIES.map((entry) => `${prefix}${entry}`);
    const current = fs.existsSync(excludeFile) ? fs.readFileSync(excludeFile, 'utf8') : '';
    const present = new Set(current.split('\n').map((line) => line.trim()));
    const missing = wanted.filter((line) => !present.has(line));
    if (missing.length) {
      fs.mkdirSync(path.dirname(excludeFile), { recursive: true });
      const lead = current === '' || current.endsWith('\n') ? '' : '\n';
      fs.appendFileSync(excludeFile, `${lead}# autoteam's board\n${missing.join('\n')}\n`);
    }
  }
}

/** `autoteam/<pipeline>-<a few words of the requirement>`. */
export function branchName(pipeline: number, requirement: string): string {
  // Accents go (é → e) rather than whole letters; other scripts leave no slug, only the number.
  const words = requirement.normalize('NFKD').replace(/[\u0300-\u036f]/g, '').toLowerCase().match(/[a-z0-9]+/g) ?? [];
  let slug = '';
  for (const word of words) {
    const next = slug ? `${slug}-${word}` : word;
    if (next.length > 40) {
      // A first word longer than the whole slug (a URL, a file path run together) is cut, not dropped.
      if (!slug) slug = word.slice(0, 40);
      break;
    }
    slug = next;
  }
  return `autoteam/${pipeline}${slug ? `-${slug}` : ''}`;
}

/** Creates `worktree` on a new branch from the repository's HEAD. Returns the branch (made unique) and base commit. */
export async function createWorktree(repoTop: string, worktree: string, branch: string): Promise<{ branch: string; base: string }> {
  const base = (await git(repoTop, ['rev-parse', '--verify', 'HEAD'])).stdout.trim();
  let name = branch;
  for (let n = 2; await branchExists(repoTop, name); n++) {
    name = `${branch}-${n}`;
  }
  if (fs.existsSync(worktree) && fs.readdirSync(worktree).length > 0) {
    throw new AutoteamError(`cannot create the worktree ${worktree}: the folder exists and is not empty (remove it, or run git worktree prune)`, 'GIT_ERROR');
  }
  fs.mkdirSync(path.dirname(worktree), { recursive: true });
  await addWorktree(repoTop, ['-b', name, worktree, base]);
  return { branch: name, base };
}

/** Each repository's `git worktree add` under way in this process: the next waits for it. */
const adding = new Map<string, Promise<void>>();
/** What git says when it read another worktree's files while they were being written. */
const HALF_WRITTEN = /failed to read .*worktrees\/|commondir|gitdir/i;

/**
 * `git worktree add -q <args>` in `repoTop`: one at a time per repository in this process, and tried
 * again, a few times, when another process's add was half done. git reads every registered
 * worktree's files as it adds one, and fails on an entry still being written (two pipelines posted at
 * once: `failed to read .git/worktrees/1/commondir`).
 */
export async function addWorktree(repoTop: string, args: readonly string[]): Promise<void> {
  const add = async () => {
    for (let attempt = 1; ; attempt++) {
      const result = await git(repoTop, ['worktree', 'add', '-q', ...args], { allowFailure: true });
      if (result.exitCode === 0) return;
      if (attempt >= 4 || !HALF_WRITTEN.test(result.stderr)) throw new GitError(`git worktree add -q ${args.join(' ')}`, gitMessage(result.stderr, result.stdout), result.exitCode);
      await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
    }
  };
  const run = (adding.get(repoTop) ?? Promise.resolve()).catch(() => undefined).then(add);
  adding.set(repoTop, run);
  try {
    await run;
  } finally {
    if (adding.get(repoTop) === run) adding.delete(repoTop);
  }
}

export interface ChangedFile {
  path: string;
  /** git's letter: A added, M modified, D deleted, R renamed, T type changed. */
  status: string;
}

export interface Change {
  base: string;
  files: ChangedFile[];
  diff: string;
}

/** `git diff --name-status --no-renames`'s lines as the files they name, each with git's letter. */
export function changedFiles(nameStatus: string): ChangedFile[] {
  return nameStatus
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [status, ...rest] = line.split('\t');
      return { status: status!.charAt(0), path: rest.join('\t') };
    });
}

/**
 * What the worktree changed against `base`, committed or not, new files included: staged into a copy
 * of the worktree's index (the real one is not touched), then diffed. The diff is cut at `maxChars`.
 */
export async function worktreeChange(worktree: string, base: string, maxChars = 40_000): Promise<Change> {
  const indexPath = path.resolve(worktree, (await git(worktree, ['rev-parse', '--git-path', 'index'])).stdout.trim());
  const scratch = scratchDir('index');
  const index = path.join(scratch, 'index');
  try {
    if (fs.existsSync(indexPath)) fs.copyFileSync(indexPath, index);
    const env = { GIT_INDEX_FILE: index };
    await git(worktree, ['add', '-A', ...PATHSPEC], { env });
    const names = await git(worktree, ['diff', '--cached', '--name-status', '--no-renames', base], { env });
    const files = changedFiles(names.stdout);
    // maxChars 0: the files only (a submission's snapshot), no patch to build and throw away.
    const patch = maxChars > 0 ? (await git(worktree, ['diff', '--cached', '--no-renames', '--no-color', base], { env })).stdout : '';
    const diff = patch.length <= maxChars ? patch : `${patch.slice(0, maxChars)}\n…[diff cut at ${maxChars} of ${patch.length} characters; run /diff for all of it]`;
    return { base, files, diff };
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

/**
 * Commits everything the worktree changed on its branch, as `author` (`autoteam <role@team>`), without
 * the repository's hooks. When there is nothing new but the branch already has a commit past `base`
 * (an approval repeated after a crash), that commit is the answer; null when nothing changed at all.
 */
export async function commitWorktree(worktree: string, base: string, message: string, email: string): Promise<string | null> {
  await git(worktree, ['add', '-A', ...PATHSPEC]);
  const staged = await git(worktree, ['diff', '--cached', '--quiet'], { allowFailure: true });
  if (staged.exitCode === 1) {
    await git(worktree, ['-c', 'commit.gpgsign=false', 'commit', '-q', '--no-verify', '-F', '-'], { env: identityEnv('autoteam', email), input: message });
  }
  // A trusted file the branch holds, changed in the worktree but left out of the change, goes back to
  // as committed: a worktree left dirty would stop the queue's rebase.
  const tracked = (await git(worktree, ['ls-files', '-z', '--', ...TRUSTED_PATHSPEC])).stdout.split('\0').filter(Boolean);
  if (tracked.length) await git(worktree, ['checkout', 'HEAD', '--', ...tracked]);
  const head = (await git(worktree, ['rev-parse', 'HEAD'])).stdout.trim();
  return head === base ? null : head;
}

export interface MergeResult {
  into: string;
  how: 'fast-forward' | 'merge commit' | 'already merged';
  commit: string;
}

/**
 * Merges `branch` into the person's current branch: fast-forward when possible, else a merge commit
 * made as the person (their git identity and signing settings). Nothing is started while the person
 * has a merge, rebase or cherry-pick under way. A conflict is found before anything is touched
 * (`git merge-tree`); on a git too old for that, a merge commit needs a clean working tree, so the
 * abort after a conflict restores exactly what was there.
 */
export async function mergeBranch(repoTop: string, branch: string, message: string, start?: { commit: string; branch?: string }): Promise<MergeResult> {
  // First: a rebase under way detaches HEAD, and is what to finish.
  const busy = await operationInProgress(repoTop);
  if (busy) throw new AutoteamError(`cannot merge ${branch}: ${busy} is in progress in ${repoTop}; finish or abort it first (nothing was changed)`, 'GIT_ERROR');
  const current = await git(repoTop, ['symbolic-ref', '--short', '-q', 'HEAD'], { allowFailure: true });
  if (current.exitCode !== 0) throw new AutoteamError(`cannot merge ${branch}: HEAD of ${repoTop} is detached; check out a branch first`, 'GIT_ERROR');
  const into = current.stdout.trim();
  if (!(await branchExists(repoTop, branch))) {
    throw new AutoteamError(`there is no branch ${branch} in ${repoTop}`, 'GIT_ERROR');
  }
  const isAncestor = async (a: string, b: string) => (await git(repoTop, ['merge-base', '--is-ancestor', a, b], { allowFailure: true })).exitCode === 0;
  // Merged by hand already (say, after a conflict): nothing to do but say so.
  if (await isAncestor(branch, 'HEAD')) return { into, how: 'already merged', commit: (await git(repoTop, ['rev-parse', 'HEAD'])).stdout.trim() };
  // The branch holds the history it started from (`start`): merged where that is not, all of it would come along.
  if (start && !(await isAncestor(start.commit, 'HEAD'))) {
    const at = start.commit.slice(0, 12);
    const why = start.branch === into ? `${into} no longer holds ${at}, the commit ${branch} started from (it was rewritten since)` : `${into} does not hold ${at}, the commit ${branch} started from${start.branch ? ` on ${start.branch}` : ''}`;
    const instead = start.branch && start.branch !== into ? `check out ${start.branch} and merge it there, or ` : '';
    throw new AutoteamError(`cannot merge ${branch} into ${into}: ${why}, so the commits before it would come along (nothing was merged); ${instead}autoteam merge --queue (/merge all) rebases only its own commits onto ${start.branch ?? 'its base'}`, 'USAGE');
  }
  // git writes over an ignored file of the person's (an untracked one it refuses): neither is touched.
  const base = (await git(repoTop, ['merge-base', 'HEAD', branch], { allowFailure: true })).stdout.trim();
  const yours = base ? await untrackedInTheWay(repoTop, base, branch) : [];
  if (yours.length) throw new AutoteamError(`cannot merge ${branch} into ${into}: it would write over ${namedFiles(yours)} in ${repoTop}, yours and not tracked by git there (an untracked or ignored file, or a folder); nothing was merged: move ${yours.length === 1 ? 'it' : 'them'} aside, then merge again`, 'GIT_ERROR');
  const fastForward = await isAncestor('HEAD', branch);
  // The person's uncommitted changes the merge would meet (git would refuse, naming no next step).
  const changed = base ? await changesInTheWay(repoTop, base, branch, { fastForward }) : [];
  if (changed.length) throw new AutoteamError(`cannot merge ${branch} into ${into}: your uncommitted changes to ${namedFiles(changed)} in ${repoTop} are in its way; nothing was merged (your branch and files are as they were): commit or stash them, then merge again`, 'GIT_ERROR');
  if (fastForward) {
    // Anything else git refuses (and changes nothing): said in its words.
    const forward = await git(repoTop, ['merge', '--ff-only', '-q', branch], { env: personEnv(), allowFailure: true });
    if (forward.exitCode !== 0) throw new GitError(`git merge --ff-only ${branch}`, `${gitMessage(forward.stderr, forward.stdout)} (nothing was merged: your branch and files are as they were)`, forward.exitCode);
    return { into, how: 'fast-forward', commit: (await git(repoTop, ['rev-parse', 'HEAD'])).stdout.trim() };
  }
  const trial = await git(repoTop, ['merge-tree', '--write-tree', '--name-only', '--no-messages', 'HEAD', branch], { allowFailure: true });
  if (trial.exitCode === 1) {
    const conflicted = trial.stdout.split('\n').slice(1).filter(Boolean);
    throw new AutoteamError(
      `merging ${branch} into ${into} conflicts in ${conflicted.join(', ') || 'some files'}; nothing was merged and your branch is as it was (merge it yourself with git merge ${branch}, then merge again to tidy up; or discard it)`,
      'MERGE_CONFLICT',
    );
  }
  if (trial.exitCode !== 0) {
    // git older than 2.38 has no merge-tree --write-tree: only a clean tree can be merged and aborted safely.
    const dirty = (await git(repoTop, ['status', '--porcelain', '--untracked-files=no'])).stdout.trim();
    if (dirty) throw new AutoteamError(`cannot merge ${branch} into ${into} with uncommitted changes on this git (${'<'} 2.38): commit or stash them first`, 'GIT_ERROR');
  }
  const configured = (await git(repoTop, ['config', 'user.email'], { allowFailure: true, env: personEnv() })).exitCode === 0;
  const merged = await git(repoTop, ['merge', '--no-ff', '--no-edit', '-q', '-m', message, branch], {
    allowFailure: true,
    env: { ...personEnv(), ...(configured || process.env.GIT_AUTHOR_EMAIL ? {} : identityEnv('autoteam', 'lead@autoteam')) },
  });
  if (merged.exitCode !== 0) {
    // No operation was under way before (checked above): a MERGE_HEAD now is this merge's, safe to abort.
    const started = (await git(repoTop, ['rev-parse', '-q', '--verify', 'MERGE_HEAD'], { allowFailure: true })).exitCode === 0;
    if (started) await git(repoTop, ['merge', '--abort'], { allowFailure: true });
    throw new GitError(`git merge --no-ff ${branch}`, `${gitMessage(merged.stderr, merged.stdout)} (${started ? 'the merge was aborted' : 'nothing was merged'}: your branch and files are as they were)`, merged.exitCode);
  }
  return { into, how: 'merge commit', commit: (await git(repoTop, ['rev-parse', 'HEAD'])).stdout.trim() };
}

/**
 * What pipeline worktree `worktree` holds that its branch does not: files changed, added or deleted,
 * tracked or not, of the kind a change is made of (PATHSPEC: neither the runtime's files nor trusted
 * ones; ignored files neither). An approved worktree holds none; one there now is someone's work since
 * the approval, which removing the worktree would lose.
 */
export async function uncommittedFiles(worktree: string): Promise<string[]> {
  const { stdout } = await git(worktree, ['status', '--porcelain', '-z', '--no-renames', '--untracked-files=all', ...PATHSPEC]);
  return stdout.split('\0').filter(Boolean).map((record) => record.slice(3));
}

/**
 * Puts pipeline worktree `worktree` back to its HEAD after a run of checks in it (the merge queue's),
 * which held nothing uncommitted before (uncommittedFiles): what the run changed or left (a test's
 * output) goes, so that it is not taken for someone's work. The runtime's and trusted files, and
 * ignored ones, are left as they are.
 */
export async function tidyWorktree(worktree: string): Promise<void> {
  await git(worktree, ['reset', '-q', '--hard', 'HEAD']);
  await git(worktree, ['clean', '-fdq', ...PATHSPEC]);
}

/** Removes a pipeline's worktree (with whatever it holds) and, unless `keepBranch`, its branch. */
export async function removeWorktree(repoTop: string, worktree: string, branch: string, options: { keepBranch?: boolean } = {}): Promise<void> {
  if (fs.existsSync(worktree)) await git(repoTop, ['worktree', 'remove', '--force', '--force', worktree]);
  await git(repoTop, ['worktree', 'prune']);
  if (!options.keepBranch && (await branchExists(repoTop, branch))) {
    await git(repoTop, ['branch', '-D', '-q', branch]);
  }
}

export async function branchExists(repoTop: string, branch: string): Promise<boolean> {
  return (await branchTip(repoTop, branch)) !== null;
}

/** The commit local branch `branch` points to, or null when there is no such branch. */
export async function branchTip(repoTop: string, branch: string): Promise<string | null> {
  const tip = await git(repoTop, ['rev-parse', '--verify', '-q', `refs/heads/${branch}^{commit}`], { allowFailure: true });
  return tip.exitCode === 0 ? tip.stdout.trim() : null;
}

/**
 * The whole change of a pipeline against its base: the worktree as it is now (files and diff), or,
 * once the worktree is gone, the branch's commit (diff only).
 */
export async function pipelineDiff(repoTop: string, info: { base: string; branch: string; worktree: string; commit?: string }): Promise<{ files: ChangedFile[] | null; diff: string }> {
  if (fs.existsSync(info.worktree)) return worktreeChange(info.worktree, info.base, Number.MAX_SAFE_INTEGER);
  return { files: null, diff: (await git(repoTop, ['diff', '--no-color', info.base, info.commit ?? info.branch])).stdout };
}

/**
 * Files of the worktree that git leaves out of the change because a rule of this machine ignores them
 * — `.git/info/exclude` or a global excludes file, not a `.gitignore` the repository holds — each with
 * the rule's file: the approval commits what git adds, so such a file, tested in review, is not merged.
 */
export async function ignoredByThisMachine(worktree: string): Promise<Array<{ file: string; rule: string }>> {
  const listed = (await git(worktree, ['ls-files', '--others', '--ignored', '--exclude-standard', '--directory', '-z'])).stdout.split('\0').filter(Boolean);
  // The runtime's own folders (the sandbox's home, temp and run) are never the work.
  const candidates = listed.filter((file) => !RUNTIME_FILES.includes(file.split('/')[0]!));
  if (candidates.length === 0) return [];
  // -z: each match is its rule's file, line, pattern and the path, NUL after each.
  const fields = (await git(worktree, ['check-ignore', '-v', '-z', '--stdin'], { input: candidates.join('\0'), allowFailure: true })).stdout.split('\0');
  const found: Array<{ file: string; rule: string }> = [];
  for (let i = 0; i + 3 < fields.length; i += 4) {
    const [rule, , , file] = fields.slice(i, i + 4) as [string, string, string, string];
    // The repository's own rules are named relative to the worktree; this machine's by their full path.
    if (!rule || (!path.isAbsolute(rule) && path.basename(rule) === '.gitignore')) continue;
    found.push({ file, rule });
  }
  return found;
}

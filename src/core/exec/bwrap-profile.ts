import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { emptyFile } from './scratch.js';

/**
 * The bubblewrap arguments for one sandbox: the system read-only, the workspace the only writable
 * place besides a size-limited /tmp and /dev/shm, and the board, the home directory and the other
 * hidden folders out of sight, where they really are (and where their board folders' links lead).
 */

export interface ProfileOptions {
  /** The one writable directory (absolute). */
  workspace: string;
  /** Directories that must not be visible: the board root, the start folder, the person's repository. */
  hidden: readonly string[];
  network: boolean;
  /** Bytes for /tmp and for /dev/shm each, or null where bwrap cannot size a tmpfs (no --size). */
  tmpBytes: number | null;
  /** The PATH whose entries under a hidden directory come back read-only. */
  pathEnv: string;
  /**
   * Paths inside the workspace kept out of sight all the same (the board's `.tasks`, `.team`, `.env`
   * when the workspace is the board's folder): an empty read-only tmpfs over a folder, an empty file over
   * a file, laid after the workspace's own bind. One that is a link out of the workspace is hidden
   * where it leads.
   */
  masked?: readonly string[];
  /** A folder outside the workspace that stays writable too (the lead's HOME and TMPDIR). */
  scratch?: string;
  /**
   * Folders a process needs read-only that lie under the profile's own tmpfs (/tmp, /var/tmp), where
   * nothing of the host shows otherwise: an MCP server's package in a checkout under /tmp. Never one
   * around or inside the board or the workspace; the home directory and the start folder stay hidden.
   */
  readOnly?: readonly string[];
}

/** What of a board root may be a link to somewhere else; its real place is hidden too. */
const BOARD_ENTRIES = ['.tasks', '.team', 'workspace', '.env'];

/** The tmpfs every sandbox gets anyway. */
const FRESH_MOUNTS = ['/tmp', '/var/tmp', '/run', '/dev', '/dev/shm'];

/** Version managers whose whole folder the shims on PATH need, and which hold no credentials. */
const TOOLCHAIN_ROOTS = new Set(['.pyenv', '.nvm', '.rbenv', '.rustup', '.volta', '.asdf', '.nodenv', '.goenv', '.jenv', '.sdkman', '.fnm']);

export function isInside(parent: string, child: string): boolean {
  const rel = path.relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

function realpath(file: string): string | null {
  try {
    return fs.realpathSync(file);
  } catch {
    return null;
  }
}

interface HiddenSet {
  /** Directories to lay an empty read-only tmpfs over. */
  dirs: string[];
  /** Files (a linked `.env`) to lay an empty file over. */
  files: string[];
  /** The board's places: no PATH entry inside or around them comes back. */
  board: string[];
  /** Where a board folder's link really leads: no PATH entry around it comes back. */
  targets: string[];
}

/**
 * Each hidden directory where it really is, and the real place of its board entries that are links
 * (`.tasks -> /data/tasks`), which the tmpfs over the directory would not cover. Mount points are
 * always real paths: bwrap cannot mount through a link (it resolves outside the new root), and a
 * link inside the sandbox leads to the real path anyway. A link into the workspace is left alone:
 * the workspace is visible by design.
 */
function hiddenSet(options: ProfileOptions, realWorkspace: string): HiddenSet {
  const set: HiddenSet = { dirs: [], files: [], board: [], targets: [] };
  for (const masked of options.masked ?? []) {
    const target = realpath(masked);
    if (!target || isInside(realWorkspace, target)) continue;
    set.targets.push(target);
    if (fs.statSync(target).isDirectory()) set.dirs.push(target);
    else set.files.push(target);
  }
  const home = realpath(os.homedir());
  if (home) set.dirs.push(home);
  for (const given of options.hidden.map((dir) => path.resolve(dir))) {
    const real = realpath(given);
    if (!real) continue;
    set.dirs.push(real);
    set.board.push(real);
    for (const name of BOARD_ENTRIES) {
      const entry = path.join(real, name);
      if (!fs.lstatSync(entry, { throwIfNoEntry: false })?.isSymbolicLink()) continue;
      const target = realpath(entry);
      if (!target || isInside(realWorkspace, target)) continue;
      set.targets.push(target);
      if (fs.statSync(target).isDirectory()) set.dirs.push(target);
      else set.files.push(target);
    }
  }
  // The sandbox's own fresh mounts hide what the host keeps there already (autoteam started in /tmp);
  // the workspace itself is bound over whatever hides it (the lead's workspace is the board's folder).
  set.dirs = set.dirs.filter((dir) => dir !== '/' && !FRESH_MOUNTS.includes(dir) && dir !== realWorkspace);
  return set;
}

/**
 * What PATH and this runtime need from under a hidden directory, read-only: the PATH entry itself
 * (`~/.cargo/bin`, not `~/.cargo` with its credentials), or the whole root of a version manager that
 * keeps no secrets and whose shims need it (`~/.pyenv`, `~/.nvm`, …). Never the board or the workspace.
 */
function toolDirs(options: ProfileOptions, hidden: readonly string[], set: HiddenSet, realWorkspace: string): string[] {
  const wanted = new Set<string>();
  const entries = [...options.pathEnv.split(path.delimiter), path.dirname(process.execPath)];
  for (const given of entries) {
    // Its folder where it really is (hidden dirs are mounted at real paths), its own name as given:
    // an entry that is itself a link (`~/.local/bin -> /opt/x/bin`) is bound at that name.
    const parent = path.isAbsolute(given) ? realpath(path.dirname(path.resolve(given))) : null;
    if (!parent) continue;
    const entry = path.join(parent, path.basename(path.resolve(given)));
    const dir = hidden.find((h) => isInside(h, entry) && entry !== h);
    if (!dir) continue;
    const first = path.relative(dir, entry).split(path.sep)[0]!;
    const bind = TOOLCHAIN_ROOTS.has(first) ? path.join(dir, first) : entry;
    if (set.board.some((b) => isInside(b, bind) || isInside(bind, b)) || isInside(bind, realWorkspace)) continue;
    if (set.targets.some((target) => isInside(bind, target))) continue;
    if (fs.existsSync(bind)) wanted.add(bind);
  }
  return [...wanted].sort();
}

/**
 * `options.readOnly`, and PATH's entries, where they really are under /tmp or /var/tmp (the profile's
 * fresh tmpfs would hide them: a folder of links to programs, a tool unpacked there), clear of the
 * board and the workspace.
 */
function readOnlyDirs(options: ProfileOptions, set: HiddenSet, realWorkspace: string): string[] {
  const wanted = new Set<string>();
  const onPath = options.pathEnv.split(path.delimiter).filter((entry) => path.isAbsolute(entry));
  for (const given of [...(options.readOnly ?? []), ...onPath]) {
    const dir = realpath(given);
    if (!dir || !['/tmp', '/var/tmp'].some((tmp) => isInside(tmp, dir) && dir !== tmp)) continue;
    if (set.board.some((b) => isInside(b, dir) || isInside(dir, b)) || isInside(dir, realWorkspace) || isInside(realWorkspace, dir)) continue;
    wanted.add(dir);
  }
  return [...wanted].sort();
}

/** The tmpfs mounts every profile makes: nothing of the host's is under them inside. */
const TMPFS_DIRS = ['/tmp', '/dev/shm', '/var/tmp', '/run'];

/**
 * Where the process starts: the workspace's path as given (so what it prints names the path the
 * person knows; a link to it still leads there inside), unless that path runs under a tmpfs of the
 * profile, where the link is not there inside (a board reached through a link in /tmp or the home
 * directory): then the real path.
 */
function startDir(given: string, real: string, hidden: readonly string[]): string {
  const resolved = path.resolve(given);
  if (resolved === real) return real;
  return [...TMPFS_DIRS, ...hidden].some((dir) => isInside(dir, resolved)) ? real : resolved;
}

/**
 * The profile, in order (later mounts win). Every tmpfs that is not /tmp or /dev/shm — /var/tmp,
 * /run, bwrap's /dev, the ones over hidden directories — is made read-only once the mounts inside
 * it exist, so the only memory executed code can fill is the two sized ones.
 */
export function bwrapProfile(options: ProfileOptions): string[] {
  const workspace = realpath(options.workspace) ?? options.workspace;
  // No --new-session here: Sandbox.command adds it unless its caller starts the sandbox with no
  // controlling terminal (a launcher's session, a detached start). A new session is a new autogroup,
  // which would run the code as a peer of the whole runtime whatever its niceness (launcher-program.ts).
  const args = ['--die-with-parent', '--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try', '--cap-drop', 'ALL'];
  if (!options.network) args.push('--unshare-net');
  const sized = (dir: string) => [...(options.tmpBytes === null ? [] : ['--size', String(options.tmpBytes)]), '--tmpfs', dir];
  args.push('--ro-bind', '/', '/', '--dev', '/dev', ...sized('/dev/shm'), '--proc', '/proc', ...sized('/tmp'), '--tmpfs', '/var/tmp', '--tmpfs', '/run');
  // The host's service sockets live in /run; with the network on, only its resolver comes back.
  if (options.network && fs.existsSync('/run/systemd/resolve')) args.push('--ro-bind', '/run/systemd/resolve', '/run/systemd/resolve');
  // Out of sight: the home directory and the board (and the repository) — tmpfs over them.
  const set = hiddenSet(options, workspace);
  const outermost = [...new Set(set.dirs)].filter((dir) => !set.dirs.some((other) => other !== dir && isInside(other, dir)));
  for (const dir of outermost) args.push('--tmpfs', dir);
  for (const file of set.files) if (!outermost.some((dir) => isInside(dir, file))) args.push('--ro-bind', emptyFile(), file);
  // What PATH and this runtime need from under a hidden directory comes back read-only (a pyenv or nvm install).
  for (const dir of toolDirs(options, outermost, set, workspace)) args.push('--ro-bind', dir, dir);
  for (const dir of readOnlyDirs(options, set, workspace)) args.push('--ro-bind', dir, dir);
  args.push('--bind', workspace, workspace, '--chdir', startDir(options.workspace, workspace, outermost));
  const scratch = options.scratch ? realpath(options.scratch) : null;
  if (scratch && !isInside(workspace, scratch)) args.push('--bind', scratch, scratch);
  // A worktree's `.git` file (or a repository's folder) stays as it is: executed code cannot repoint it.
  const dotGit = path.join(workspace, '.git');
  if (fs.existsSync(dotGit)) args.push('--ro-bind', dotGit, dotGit);
  const maskedDirs: string[] = [];
  for (const masked of options.masked ?? []) {
    // Where it really is: a link to somewhere else in the workspace is hidden there (one out of it, above).
    const inside = realpath(masked);
    if (!inside || inside === workspace || !isInside(workspace, inside)) continue;
    const stat = fs.statSync(inside);
    if (stat.isDirectory()) {
      args.push('--tmpfs', inside);
      maskedDirs.push(inside);
    } else {
      args.push('--ro-bind', emptyFile(), inside);
    }
  }
  // /proc read-only too: code cannot give its session back the runtime's priority
  // (/proc/self/autogroup), which would also hold for the thread's later runs.
  for (const dir of ['/dev', '/proc', '/var/tmp', '/run', ...outermost, ...maskedDirs]) args.push('--remount-ro', dir);
  return args;
}

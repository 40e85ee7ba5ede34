import fs from 'node:fs';
import path from 'node:path';
import { AutoteamError } from '../errors.js';

/** A path that would reach outside the workspace (absolute, `..`, a symlink out, a null byte). */
export class PathEscapeError extends AutoteamError {
  constructor(
    readonly requested: string,
    reason: string,
    advice = "Paths must stay inside the workspace: use a relative path like 'organize.py' or 'src/util.py'.",
  ) {
    super(`refused path '${requested.replace(/\0/g, '\\0')}': ${reason}. ${advice}`, 'PATH_ESCAPE');
  }
}

const MAX_LINK_HOPS = 40;

function isInside(base: string, target: string): boolean {
  const rel = path.relative(base, target);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/**
 * The real location of `p`, following every symlink among its existing components. Components that
 * do not exist yet are appended unchanged (they cannot be links). A dangling link is followed to
 * its target by hand, since writing through it would create the target.
 */
function realpathDeep(p: string, hops = 0): string {
  if (hops > MAX_LINK_HOPS) throw new PathEscapeError(p, 'too many levels of symbolic links');
  const rest: string[] = [];
  let current = p;
  for (;;) {
    let stat: fs.Stats | null = null;
    try {
      stat = fs.lstatSync(current);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw error;
    }
    if (stat) {
      try {
        return path.join(fs.realpathSync(current), ...rest);
      } catch {
        if (!stat.isSymbolicLink()) throw new PathEscapeError(p, 'the path cannot be resolved');
        const linkTarget = path.resolve(path.dirname(current), fs.readlinkSync(current));
        return realpathDeep(path.join(linkTarget, ...rest), hops + 1);
      }
    }
    const parent = path.dirname(current);
    if (parent === current) return p;
    rest.unshift(path.basename(current));
    current = parent;
  }
}

/**
 * Resolves `relPath` against `workspace` and returns the absolute path, or throws PathEscapeError.
 * Checked twice: lexically (absolute paths, `..`) and after following symlinks, so a link inside the
 * workspace that points outside is refused too.
 */
export function resolveInWorkspace(workspace: string, relPath: string, offLimits: readonly string[] = []): string {
  if (relPath.includes('\0')) throw new PathEscapeError(relPath, 'it contains a null byte');
  const base = path.resolve(workspace);
  const realBase = realpathDeep(base);
  const target = path.resolve(base, relPath);
  if (!isInside(base, target) && !isInside(realBase, target)) {
    throw new PathEscapeError(relPath, path.isAbsolute(relPath) ? 'it is an absolute path outside the workspace' : 'it leaves the workspace');
  }
  const real = realpathDeep(target);
  if (!isInside(realBase, real)) {
    throw new PathEscapeError(relPath, 'it goes through a symbolic link that points outside the workspace');
  }
  // A worktree's `.git` (and any repository metadata) belongs to git, not to the file tools.
  if ([path.relative(base, target), path.relative(realBase, real)].some((rel) => rel.split(path.sep)[0]!.toLowerCase() === '.git')) {
    throw new PathEscapeError(relPath, "'.git' is git's own data, off limits to the file tools");
  }
  // Inside this workspace but not the agent's: the board's own files when the workspace is the board's folder.
  for (const kept of offLimits) {
    // In any case: a disk that ignores case (macOS's) writes `.ENV` into `.env`.
    const rel = path.normalize(kept).toLowerCase();
    if ([path.relative(base, target), path.relative(realBase, real)].map((candidate) => candidate.toLowerCase()).some((candidate) => candidate === rel || candidate.startsWith(`${rel}${path.sep}`))) {
      throw new PathEscapeError(relPath, `'${kept}' ${whatIsKept(kept)}, off limits to the file tools`, 'Work on the other files of the folder.');
    }
  }
  return target;
}

/** Why a path inside the folder is kept from the agents, in the words of what it holds. */
function whatIsKept(kept: string): string {
  const name = path.basename(path.normalize(kept));
  if (name === '.env') return "holds the person's secrets";
  if (name === 'autoteam.config.json') return "holds the person's settings and hooks";
  return "is the board's own data";
}

/**
 * Refuses what a file tool must not touch even inside the workspace: a file with more than one hard
 * link (its other name may be outside — `ln /etc/x here` would let read and write reach it), and
 * devices, FIFOs and sockets. A path that does not exist yet is fine.
 */
export function assertPlainFile(abs: string, relPath: string): void {
  let stat: fs.Stats;
  try {
    stat = fs.lstatSync(abs);
  } catch {
    return;
  }
  if (stat.isDirectory() || stat.isSymbolicLink()) return;
  if (!stat.isFile()) throw new PathEscapeError(relPath, 'it is a device, FIFO or socket, not a regular file');
  if (stat.nlink > 1) throw new PathEscapeError(relPath, `it is a hard link (${stat.nlink} names for one file; another may be outside the workspace)`);
}

/** `abs` relative to the workspace with forward slashes, as shown to a model and stored on the board. */
export function workspaceRelative(workspace: string, abs: string): string {
  return path.relative(path.resolve(workspace), abs).split(path.sep).join('/') || '.';
}

const SKIP_DIRS = new Set(['node_modules', '__pycache__', '.git', '.run']);

/**
 * Up to `limit` files under the workspace (relative paths), skipping dot and build directories and
 * what is `offLimits` to the file tools (a listing does not offer what a read would refuse).
 */
export function listWorkspaceFiles(workspace: string, limit = 50, offLimits: readonly string[] = []): string[] {
  const kept = new Set(offLimits.map((rel) => path.normalize(rel)));
  const found: string[] = [];
  const walk = (dir: string): void => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    entries.sort((a, b) => a.name.localeCompare(b.name));
    for (const entry of entries) {
      if (found.length >= limit) return;
      const abs = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (!SKIP_DIRS.has(entry.name) && !entry.name.startsWith('.')) walk(abs);
      } else if (entry.isFile()) {
        const rel = workspaceRelative(workspace, abs);
        if (!kept.has(path.normalize(rel))) found.push(rel);
      }
    }
  };
  walk(path.resolve(workspace));
  return found;
}

/** The outcome kind of a failed file operation: a path the confinement refused, or another error. */
export function fileErrorKind(error: unknown): 'sandbox_denied' | 'error' {
  return error instanceof PathEscapeError ? 'sandbox_denied' : 'error';
}

/**
 * A message for the model about a failed file operation: what went wrong and what is allowed.
 * Unexpected errors keep their own message.
 */
export function describeFileError(error: unknown, workspace: string, relPath: string, offLimits: readonly string[] = []): string {
  if (error instanceof AutoteamError) return error.message;
  const code = (error as NodeJS.ErrnoException | null)?.code;
  if (code === 'ENOENT') {
    const files = listWorkspaceFiles(workspace, 30, offLimits);
    return `no such file '${relPath}' in the workspace. Files there: ${files.length ? files.join(', ') : '(none yet)'}`;
  }
  if (code === 'EISDIR') return `'${relPath}' is a directory, not a file`;
  if (code === 'ENOTDIR') return `'${relPath}': a part of the path is a file, not a directory`;
  if (code === 'EACCES' || code === 'EPERM') return `'${relPath}': permission denied`;
  return `'${relPath}': ${error instanceof Error ? error.message : String(error)}`;
}

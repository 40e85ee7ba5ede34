import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { createTwoFilesPatch } from 'diff';
import { writeFileAtomic } from '../board/atomic-io.js';
import type { BlobStore } from '../board/blobs.js';
import type { Task } from '../board/schemas.js';
import { isInside } from '../exec/bwrap-profile.js';
import { listWorkspaceFiles, resolveInWorkspace } from '../exec/sandbox-path.js';
import { RemoteError } from '../git/remote.js';
import { checkoutRemoteTask } from '../git/remote-branch.js';

/**
 * What a submission was, file by file: every file of the workspace is hashed when the engineer
 * submits, and its content kept in a content-addressed store beside the board
 * (`.autoteam/blobs/<sha256>`), out of the workspace's reach. A re-review diffs against it; an
 * unchanged resubmission is recognised by its hashes.
 */

/** Files larger than this are hashed but not kept (no diff for them). */
const MAX_BLOB_BYTES = 1_000_000;
const MAX_FILES = 500;

export type Manifest = Record<string, string>;

const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest('hex');

export function blobDir(rootDir: string): string {
  return path.join(rootDir, '.autoteam', 'blobs');
}

/**
 * Hashes every file of the workspace (dot files, dot and build folders left out) — or, on a
 * repository, the files the branch changed (`only`) — and keeps the small ones. It runs outside the
 * sandbox, so it never follows a link: a symbolic link is taken as git takes it, its target's path
 * (a link made by the agents' code to /etc/shadow, or to a folder, is that path, never the file or
 * folder it names); what is neither a file nor a link is left out.
 */
export function snapshotWorkspace(rootDir: string, workspace: string, only?: readonly string[]): Manifest {
  const manifest: Manifest = {};
  const store = blobDir(rootDir);
  fs.mkdirSync(store, { recursive: true });
  const base = fs.realpathSync(workspace);
  for (const rel of only ? only.slice(0, MAX_FILES) : listWorkspaceFiles(workspace, MAX_FILES)) {
    if (!only && rel.split('/').some((part) => part.startsWith('.'))) continue;
    const data = fileOrLink(base, rel);
    if (data === null) continue;
    const hash = sha256(data);
    manifest[rel] = hash;
    const blob = path.join(store, hash);
    if (data.length <= MAX_BLOB_BYTES && !fs.existsSync(blob)) writeFileAtomic(blob, data);
  }
  return manifest;
}

/**
 * A regular file's content, a symbolic link's target path (not followed), or null for anything else,
 * nothing, or a path whose folder is not inside the workspace (`base`, its real path) through a link.
 */
function fileOrLink(base: string, rel: string): Buffer | null {
  const file = path.join(base, rel);
  let folder: string;
  try {
    folder = fs.realpathSync(path.dirname(file));
  } catch {
    return null;
  }
  if (!isInside(base, folder)) return null;
  const stat = fs.lstatSync(file, { throwIfNoEntry: false });
  if (stat?.isSymbolicLink()) return Buffer.from(fs.readlinkSync(file));
  if (!stat?.isFile()) return null;
  // Opened without following a link: one swapped in since the lstat is refused (ELOOP), not read through.
  const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
  try {
    return fs.readFileSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

export function sameManifest(a: Manifest, b: Manifest): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => b[key] === a[key]);
}

/** A version's text; null when it is binary or over the blob limit; 'missing' when the board has no copy. */
function blobText(rootDir: string, hash: string | undefined): string | null | 'missing' {
  if (!hash) return '';
  const file = path.join(blobDir(rootDir), hash);
  if (!fs.existsSync(file)) return 'missing';
  const data = fs.readFileSync(file);
  return data.includes(0) ? null : data.toString('utf8');
}

/**
 * The unified diff from `before` to `after`, file by file (added, changed, removed), cut at
 * `maxChars` with a note. Binary files, and versions the board holds no copy of, are named, not diffed.
 */
export function manifestDiff(rootDir: string, before: Manifest, after: Manifest, maxChars = 20_000): string {
  const paths = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  const parts: string[] = [];
  for (const file of paths) {
    if (before[file] === after[file]) continue;
    const old = blobText(rootDir, before[file]);
    const now = blobText(rootDir, after[file]);
    if (old === 'missing' || now === 'missing') {
      // Not kept (over MAX_BLOB_BYTES) or removed from .autoteam/blobs since: said as that, not as binary.
      const which = old === 'missing' ? `its earlier version (${before[file]!.slice(0, 12)})` : `its new version (${after[file]!.slice(0, 12)})`;
      parts.push(`${file} ${before[file] ? (after[file] ? 'changed' : 'removed') : 'added'}; no diff: the board holds no copy of ${which}, over 1 MB or removed since`);
      continue;
    }
    if (old === null || now === null) {
      parts.push(`Binary file ${file} ${before[file] ? (after[file] ? 'changed' : 'removed') : 'added'}`);
      continue;
    }
    const from = before[file] ? `a/${file}` : '/dev/null';
    const to = after[file] ? `b/${file}` : '/dev/null';
    parts.push(createTwoFilesPatch(from, to, old, now, undefined, undefined, { context: 3 }).replace(/^=+\n/, '').trimEnd());
  }
  const text = parts.join('\n');
  if (text.length <= maxChars) return text;
  return `${text.slice(0, maxChars)}\n…[diff cut at ${maxChars} of ${text.length} characters]`;
}

/**
 * Makes `workspace` hold the submitted files (`manifest`: path → sha256): every file that is missing
 * or differs is written from the board's blobs, through the workspace's confinement. Other files are
 * left alone. Returns the paths written and those the board holds no content for (over the blob limit).
 */
export async function materialize(workspace: string, manifest: Manifest, blobs: BlobStore): Promise<{ written: string[]; missing: string[] }> {
  const written: string[] = [];
  const missing: string[] = [];
  for (const [rel, hash] of Object.entries(manifest)) {
    let target: string;
    try {
      target = resolveInWorkspace(workspace, rel);
    } catch {
      continue; // a manifest path never leaves the workspace
    }
    const current = fs.existsSync(target) ? sha256(fs.readFileSync(target)) : null;
    if (current === hash) continue;
    const data = await blobs.get(hash);
    if (!data || sha256(data) !== hash) {
      missing.push(rel);
      continue;
    }
    fs.mkdirSync(path.dirname(target), { recursive: true });
    writeFileAtomic(target, data);
    written.push(rel);
  }
  return { written, missing };
}

/** Sends the kept content of a manifest's files to the board's blob store (a no-op for the file board's own folder). */
export async function uploadBlobs(rootDir: string, manifest: Manifest, blobs: BlobStore): Promise<void> {
  for (const hash of new Set(Object.values(manifest))) {
    const file = path.join(blobDir(rootDir), hash);
    if (fs.existsSync(file)) await blobs.put(hash, fs.readFileSync(file));
  }
}

/** What reaching a pipeline's remote needs of the claiming process: its board folder, and its own `repository.remote` (the full URL). */
export interface RemoteAccess {
  rootDir?: string;
  url?: string;
}

/**
 * Makes a task's workspace ready before its stage runs. A pipeline in a git worktree needs the
 * worktree (`gone` says why not); on a remote, this folder's worktree is fetched to the task's commit
 * (`unavailable`: the remote did not answer, try later). Otherwise the submitted files come through the board, so a stage
 * claimed in another folder, or on another machine, sees them; `notes` say what was fetched or missing.
 */
export async function prepareWorkspace(workspace: string, task: Task, blobs: BlobStore, remote: RemoteAccess = {}): Promise<{ gone?: string; unavailable?: string; notes: string[] }> {
  const git = task.artifacts.git;
  if (git?.remote && remote.rootDir) {
    // Another folder (another machine) may have moved the branch on: fetch the commit this task names.
    try {
      const { note } = await checkoutRemoteTask(remote.rootDir, git, remote.url);
      return { notes: note ? [note] : [] };
    } catch (error) {
      const message = (error as Error).message;
      // A remote that does not answer may answer later, and a folder that has its credentials may take the
      // task: it is retried (MAX_ATTEMPTS); a branch or commit that is gone ends it.
      const later = (error instanceof RemoteError && error.kind === 'unreachable') || (error as { code?: string }).code === 'REMOTE_CREDENTIALS';
      return later ? { unavailable: message, notes: [] } : { gone: message, notes: [] };
    }
  }
  if (git) {
    if (!fs.existsSync(workspace)) return { gone: `the pipeline's worktree ${workspace} is gone (discarded, or removed by hand)`, notes: [] };
    return { notes: [] };
  }
  fs.mkdirSync(workspace, { recursive: true });
  const submitted = task.artifacts.submitted?.files;
  if (!submitted) return { notes: [] };
  const { written, missing } = await materialize(workspace, submitted, blobs).catch(() => ({ written: [], missing: Object.keys(submitted) }));
  const notes: string[] = [];
  if (written.length) notes.push(`fetched ${written.length} submitted file${written.length === 1 ? '' : 's'} from the board`);
  if (missing.length) notes.push(`the board holds no content for ${missing.join(', ')} (over the blob limit)`);
  return { notes };
}

import { createHash } from 'node:crypto';
import fs from 'node:fs';
import type { Artifacts, FileArtifact } from '../board/artifacts.js';
import { resolveInWorkspace } from '../exec/sandbox-path.js';

export type { FileArtifact };

/** sha256 of a workspace file as it is now, or null when it cannot be read. */
export function workspaceFileSha(workspace: string, relPath: string): string | null {
  try {
    return createHash('sha256').update(fs.readFileSync(resolveInWorkspace(workspace, relPath))).digest('hex');
  } catch {
    return null;
  }
}

export function fileArtifact(relPath: string, content: string | Buffer): FileArtifact {
  const buffer = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
  return { path: relPath, sha256: createHash('sha256').update(buffer).digest('hex'), bytes: buffer.length };
}

function isEntry(value: unknown): value is FileArtifact {
  return typeof value === 'object' && value !== null && typeof (value as FileArtifact).path === 'string';
}

/** `files` with `entry` added, replacing an earlier entry for the same path (order of first write kept). */
export function upsertFileArtifact(files: unknown, entry: FileArtifact): FileArtifact[] {
  const list = Array.isArray(files) ? files.filter(isEntry) : [];
  const index = list.findIndex((item) => item.path === entry.path);
  if (index === -1) return [...list, entry];
  return list.map((item, i) => (i === index ? entry : item));
}

/** An artifacts updater for `ctx.record`: keeps every other key, replaces `files`. */
export function withFileArtifact(entry: FileArtifact): (current: Artifacts) => Artifacts {
  return (current) => ({ ...current, files: upsertFileArtifact(current.files, entry) });
}

import { createHash } from 'node:crypto';

/** One entry of `task.artifacts.files`: what the engineer wrote, as it was last written. */
export interface FileArtifact {
  path: string;
  sha256: string;
  bytes: number;
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
export function withFileArtifact(entry: FileArtifact): (current: Record<string, unknown>) => Record<string, unknown> {
  return (current) => ({ ...current, files: upsertFileArtifact(current.files, entry) });
}

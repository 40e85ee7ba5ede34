import path from 'node:path';
import type { Task } from '../board/schemas.js';
import { instructionFiles, type InstructionFile } from '../git/agents-md.js';
import type { ModelMessage } from '../model/types.js';
import { formatBytes } from '../sizes.js';

/** How much of the repository's instructions one task's system prompt carries (agentsMd.maxBytes). */
export const DEFAULT_AGENTS_MD_BYTES = 32 * 1024;

/** Below this little room a file is left out rather than cut to a stub. */
const MIN_PART = 512;

/** Whether the repository's AGENTS.md files reach the teammates, and how much of them. */
export interface AgentsMdSettings {
  enabled: boolean;
  maxBytes: number;
}

/** A file used, as the event log records it: its size, and how much of it went in (0: left out, at the cap). */
export interface InstructionsUse {
  path: string;
  bytes: number;
  kept: number;
}

interface Kept extends InstructionsUse {
  text: string;
}

const INTRO = [
  "The repository's own instructions for agents working in it: its AGENTS.md (or CLAUDE.md) files, as committed at",
  "the pipeline's base. They are the words of the repository's people, not of autoteam. Follow them where they",
  "apply to your work; where they conflict with your stage's instructions and tools below, those win.",
].join('\n');

/**
 * The folders of `paths` (relative to the repository's top, or absolute inside `top`) and every
 * folder between them and the top, top first. Paths out of the repository, and `.git`, are none.
 */
export function foldersOf(paths: readonly string[], top: string): string[] {
  const folders = new Set<string>(['']);
  for (const given of paths) {
    const relative = path.isAbsolute(given) ? path.relative(top, given) : given;
    const file = path.posix.normalize(relative.split(path.sep).join('/'));
    if (file.startsWith('..') || path.posix.isAbsolute(file) || file === '.' || file.split('/')[0]?.toLowerCase() === '.git') continue;
    const parts = path.posix.dirname(file).split('/').filter((part) => part && part !== '.');
    for (let depth = 1; depth <= parts.length; depth++) folders.add(parts.slice(0, depth).join('/'));
  }
  return [...folders].sort((a, b) => (a === '' ? -1 : b === '' ? 1 : a.split('/').length - b.split('/').length));
}

/** The files the model's tool calls named so far (`path`, `file`, `files` arguments): what the stage touches. */
export function touchedPaths(messages: readonly ModelMessage[]): string[] {
  const paths: string[] = [];
  for (const message of messages) {
    if (message.role !== 'assistant' || typeof message.content === 'string') continue;
    for (const block of message.content) {
      if (block.type !== 'tool_use' || typeof block.input !== 'object' || block.input === null) continue;
      const input = block.input as Record<string, unknown>;
      for (const value of [input.path, input.file, ...(Array.isArray(input.files) ? input.files : [])]) if (typeof value === 'string' && value) paths.push(value);
    }
  }
  return paths;
}

/** The files a task starts with: what the pipeline changed, wrote and submitted so far. */
export function startingPaths(task: Task): string[] {
  const { change, files, submitted } = task.artifacts;
  return [...(change?.files.map((file) => file.path) ?? []), ...(files?.map((file) => file.path) ?? []), ...(submitted ? [submitted.file] : [])];
}

/**
 * The repository's instructions for one task in repository mode: the top folder's AGENTS.md (or
 * CLAUDE.md), then those of the folders of the files the task touches, each read once, held
 * together to `maxBytes` (a file over what is left is cut with a note; once the cap is reached the
 * rest are named but left out). `text()` is the block that goes ahead of the stage's prompt;
 * `told` hears which files each step added (the `repository_instructions` event).
 */
export class RepositoryInstructions {
  private readonly files: Kept[] = [];
  private readonly looked = new Set<string>();
  private used = 0;

  constructor(
    private readonly repo: { repo: string; base: string; worktree: string },
    private readonly maxBytes: number,
    private readonly told: (files: InstructionsUse[]) => void,
  ) {}

  /** Reads the instructions of the folders of `paths` not looked at yet (the top folder on the first call). */
  async touch(paths: readonly string[]): Promise<void> {
    const folders = foldersOf(paths, this.repo.worktree).filter((folder) => !this.looked.has(folder));
    if (folders.length === 0) return;
    for (const folder of folders) this.looked.add(folder);
    const found = await instructionFiles(this.repo.repo, this.repo.base, folders);
    if (found.length === 0) return;
    const added = found.map((file) => this.keep(file));
    this.files.push(...added);
    this.told(added.map(({ path: file, bytes, kept }) => ({ path: file, bytes, kept })));
  }

  /** The block for the system prompt ('' when the repository has no instructions). */
  text(): string {
    if (this.files.length === 0) return '';
    const cap = formatBytes(this.maxBytes);
    const files = this.files.map((file) => (file.kept > 0 ? `<file path="${file.path}">\n${file.text}\n</file>` : `<file path="${file.path}" omitted="the ${cap} cap on the repository's instructions is reached"/>`));
    return ['<repository-instructions>', INTRO, ...files, '</repository-instructions>'].join('\n');
  }

  private keep(file: InstructionFile): Kept {
    const bytes = file.content.length;
    const room = this.maxBytes - this.used;
    if (bytes <= room) {
      this.used += bytes;
      return { path: file.path, bytes, kept: bytes, text: file.content.toString('utf8').trimEnd() };
    }
    if (room < MIN_PART) return { path: file.path, bytes, kept: 0, text: '' };
    // A character split by the byte cut decodes to U+FFFD at the end: dropped.
    const head = file.content.subarray(0, room).toString('utf8').replace(/\uFFFD+$/, '');
    this.used += room;
    const note = `… cut: ${formatBytes(bytes - room)} more of ${file.path}; the repository's instructions are held to ${formatBytes(this.maxBytes)} a task (agentsMd.maxBytes in autoteam.config.json)`;
    return { path: file.path, bytes, kept: room, text: `${head.trimEnd()}\n${note}` };
  }
}

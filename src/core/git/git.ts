import fs from 'node:fs';
import path from 'node:path';
import { AutoteamError } from '../errors.js';
import { childEnv } from '../exec/env.js';
import { launchProcess } from '../exec/launcher.js';

/** A git command that failed: one line naming the command and what git said, never a stack trace. */
export class GitError extends AutoteamError {
  constructor(
    readonly command: string,
    readonly detail: string,
    readonly exitCode: number | null,
  ) {
    super(`${command} failed: ${detail}`, 'GIT_ERROR');
  }
}

export interface GitResult {
  stdout: string;
  stderr: string;
  exitCode: number;
}

export interface GitOptions {
  /** Extra environment (an index file, an identity). */
  env?: Record<string, string>;
  /** Return a non-zero exit instead of throwing (the caller reads `exitCode`). */
  allowFailure?: boolean;
  input?: string;
}

/**
 * git's complaint as one line: its first `fatal:`/`error:` line without the prefix, followed by the
 * file names git lists under it (`The following untracked working tree files would be overwritten by
 * merge:` is nothing without them).
 */
export function gitMessage(stderr: string, stdout = ''): string {
  const lines = `${stderr}\n${stdout}`.split('\n');
  let start = lines.findIndex((line) => /^(fatal|error):/.test(line.trim()));
  if (start < 0) start = lines.findIndex((line) => line.trim() !== '');
  if (start < 0) return 'no output';
  const head = lines[start]!.trim().replace(/^(fatal|error):\s*/, '');
  const files: string[] = [];
  for (const line of lines.slice(start + 1)) {
    if (!/^\s+\S/.test(line)) break;
    files.push(line.trim());
  }
  return files.length ? `${head} ${files.slice(0, 10).join(', ')}${files.length > 10 ? `, … (${files.length} files)` : ''}` : head;
}

/** The person's own git settings for commands made on their behalf (merge): identity, config, signing. */
export function personEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && /^GIT_(AUTHOR|COMMITTER)_(NAME|EMAIL|DATE)$|^GIT_CONFIG_(GLOBAL|SYSTEM|NOSYSTEM)$|^GNUPGHOME$|^SSH_AUTH_SOCK$/.test(name)) env[name] = value;
  }
  return env;
}

/** What a git command may print before it is stopped (execa's default, which git ran under before). */
const GIT_MAX_BUFFER = 100 * 1024 * 1024;

/**
 * Runs the real `git` CLI in `cwd`. The environment is the allow-list every child gets (no keys or
 * tokens) plus what git needs to find its configuration; git never prompts and speaks English, so its
 * messages can be read.
 */
export async function git(cwd: string, args: readonly string[], options: GitOptions = {}): Promise<GitResult> {
  const env = { ...gitEnv(), ...options.env };
  const command = `git ${args.join(' ')}`;
  if (!fs.existsSync(cwd)) throw new GitError(command, `no such directory: ${cwd}`, null);
  // Through the thread's process launcher, as every process the runtime starts (exec/launcher.ts).
  const child = await launchProcess({ argv: ['git', ...args], cwd, env, maxBuffer: GIT_MAX_BUFFER, ...(options.input !== undefined ? { input: options.input } : {}) });
  const result = await child.outcome;
  if (result.startError) {
    throw new GitError(command, result.startError.code === 'ENOENT' ? 'git is not installed (not found on PATH)' : result.startError.message.split('\n')[0]!, null);
  }
  if (result.overflow) throw new GitError(command, `its output passed ${GIT_MAX_BUFFER / 1024 / 1024} MB`, null);
  if (result.lost) throw new GitError(command, 'the process launcher was killed under it, and git with it', null);
  const out: GitResult = { stdout: result.stdout, stderr: result.stderr, exitCode: result.exitCode ?? 1 };
  if (out.exitCode !== 0 && !options.allowFailure) throw new GitError(command, gitMessage(out.stderr, out.stdout), out.exitCode);
  return out;
}

/**
 * The environment git runs with: the child allow-list, what git needs to find its configuration, no
 * prompts, English. git runs in a session of its own (exec/launcher.ts), so ssh cannot ask at the
 * terminal either: the person's ssh agent (`SSH_AUTH_SOCK`) is how a key with a passphrase works.
 */
export function gitEnv(): Record<string, string> {
  return { ...childEnv(process.env, ['HOME', 'XDG_CONFIG_HOME', 'USER', 'SSH_AUTH_SOCK']), GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C' };
}

/** An identity for commits the runtime makes, whatever the person's git configuration holds. */
export function identityEnv(name: string, email: string): Record<string, string> {
  return { GIT_AUTHOR_NAME: name, GIT_AUTHOR_EMAIL: email, GIT_COMMITTER_NAME: name, GIT_COMMITTER_EMAIL: email };
}

/** A merge, rebase, cherry-pick or revert under way in the working tree `repoTop`, or null. */
export async function operationInProgress(repoTop: string): Promise<string | null> {
  for (const [ref, what] of [
    ['MERGE_HEAD', 'a merge'],
    ['CHERRY_PICK_HEAD', 'a cherry-pick'],
    ['REVERT_HEAD', 'a revert'],
  ] as const) {
    if ((await git(repoTop, ['rev-parse', '-q', '--verify', ref], { allowFailure: true })).exitCode === 0) return what;
  }
  for (const dir of ['rebase-merge', 'rebase-apply']) {
    const at = (await git(repoTop, ['rev-parse', '--git-path', dir])).stdout.trim();
    if (fs.existsSync(path.resolve(repoTop, at))) return 'a rebase';
  }
  return null;
}

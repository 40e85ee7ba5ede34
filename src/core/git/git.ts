import { execa } from 'execa';
import { AutoteamError } from '../errors.js';
import { childEnv } from '../exec/env.js';

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

/** The first line of git's complaint worth showing (`fatal: …`, `error: …`), without the prefix noise. */
function firstLine(stderr: string, stdout: string): string {
  const lines = `${stderr}\n${stdout}`.split('\n').map((line) => line.trim()).filter(Boolean);
  const pick = lines.find((line) => /^(fatal|error):/.test(line)) ?? lines[0] ?? 'no output';
  return pick.replace(/^(fatal|error):\s*/, '');
}

/**
 * Runs the real `git` CLI in `cwd`. The environment is the allow-list every child gets (no keys or
 * tokens) plus what git needs to find its configuration; git never prompts and speaks English, so its
 * messages can be read.
 */
export async function git(cwd: string, args: readonly string[], options: GitOptions = {}): Promise<GitResult> {
  const env = {
    ...childEnv(process.env, ['HOME', 'XDG_CONFIG_HOME', 'USER']),
    GIT_TERMINAL_PROMPT: '0',
    LC_ALL: 'C',
    ...options.env,
  };
  const command = `git ${args.join(' ')}`;
  let result;
  try {
    result = await execa('git', [...args], { cwd, env, extendEnv: false, reject: false, stripFinalNewline: true, ...(options.input !== undefined ? { input: options.input } : {}) });
  } catch (error) {
    throw new GitError(command, (error as Error).message.split('\n')[0] ?? 'could not start git', null);
  }
  if (result.failed && result.exitCode === undefined) {
    throw new GitError(command, result.code === 'ENOENT' ? 'git is not installed (not found on PATH)' : firstLine(String(result.stderr), ''), null);
  }
  const out: GitResult = { stdout: String(result.stdout), stderr: String(result.stderr), exitCode: result.exitCode ?? 1 };
  if (out.exitCode !== 0 && !options.allowFailure) throw new GitError(command, firstLine(out.stderr, out.stdout), out.exitCode);
  return out;
}

/** An identity for commits the runtime makes, whatever the person's git configuration holds. */
export function identityEnv(name: string, email: string): Record<string, string> {
  return { GIT_AUTHOR_NAME: name, GIT_AUTHOR_EMAIL: email, GIT_COMMITTER_NAME: name, GIT_COMMITTER_EMAIL: email };
}

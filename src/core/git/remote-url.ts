import { createHash } from 'node:crypto';
import path from 'node:path';
import { AutoteamError } from '../errors.js';

/**
 * A remote repository's URL as it may be shown and stored (task files, events, messages): a password
 * in it becomes `***`, and so does the user of an http(s) URL (a token is often given as the user,
 * `https://<token>@host/…`). An ssh user (`git@host:…`) is no secret and stays.
 */
export function redactGitUrl(url: string): string {
  const match = /^([a-z][a-z0-9+.-]*):\/\/([^/?#@]*)@(.*)$/is.exec(url);
  if (!match) return url;
  const [, scheme, userinfo, rest] = match as unknown as [string, string, string, string];
  const colon = userinfo.indexOf(':');
  if (colon >= 0) return `${scheme}://${userinfo.slice(0, colon)}:***@${rest}`;
  return /^https?$/i.test(scheme) ? `${scheme}://***@${rest}` : url;
}

/**
 * `remote` with a local path made absolute from `from`, the folder it was given in (the current
 * folder for `--remote`, the config file's for `repository.remote`): git would read a relative path
 * in the clone's config from the clone's own folder. A URL (`scheme://…`) or an scp-like address
 * (`[user@]host:path`, a colon before any slash) is kept as it is.
 */
export function absoluteRemote(remote: string, from: string): string {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(remote) || /^[^/]+:/.test(remote)) return remote;
  return path.resolve(from, remote);
}

/**
 * The URL to reach a task's remote with. A task records the remote redacted; when that hides
 * credentials, the full URL must be this process's own `repository.remote` (or `--remote`), whose
 * redacted form is the task's. Credentials never travel through the board.
 */
export function resolveRemoteUrl(shown: string, configured: string | undefined): string {
  if (!shown.includes('***')) return shown;
  if (configured && redactGitUrl(configured) === shown) return configured;
  throw new AutoteamError(
    `the pipeline's remote ${shown} needs credentials this process does not have: give the full URL as repository.remote in autoteam.config.json (or --remote), or use a git credential helper and a URL without them`,
    'REMOTE_CREDENTIALS',
  );
}

/** This folder's own copy of a remote and the pipelines' worktrees from it: `.autoteam/remote/<hash of the shown URL>`. */
export function remoteHome(rootDir: string, shown: string): string {
  return path.join(rootDir, '.autoteam', 'remote', createHash('sha256').update(shown).digest('hex').slice(0, 16));
}

/** The bare clone inside a remote's home. */
export function remoteClone(rootDir: string, shown: string): string {
  return path.join(remoteHome(rootDir, shown), 'clone.git');
}

/** A pipeline branch's worktree in this folder: one per branch, whichever machine posted it. */
export function remoteWorktree(rootDir: string, shown: string, branch: string): string {
  return path.join(remoteHome(rootDir, shown), 'worktrees', ...branch.split('/'));
}
